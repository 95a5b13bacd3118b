import { after, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pluginCommands, runAction } from "./actions.js";
import { loadPlugins, type Plugin } from "./manifest.js";
import { probeSandbox } from "../tools/sandbox-probe.js";
import { sandboxOf } from "../tools/sandbox.js";

/** The plugin folders the tests made, removed when the file is done. */
const made: string[] = [];
after(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

const node = process.execPath;
const env = { PATH: process.env.PATH, SECRET_HINT: "from-caller" };
const umask = 0o022;

/** One plugin folder with a manifest and scripts, loaded strictly so every fixture is valid. */
async function plugin(name: string, actions: unknown[], scripts: Record<string, string> = {}): Promise<Plugin[]> {
  const dir = mkdtempSync(join(tmpdir(), "rx-actions-"));
  made.push(dir);
  mkdirSync(join(dir, name));
  writeFileSync(join(dir, name, "manifest.json"), JSON.stringify({ name, actions }));
  for (const [file, text] of Object.entries(scripts)) writeFileSync(join(dir, name, file), text);
  return (await loadPlugins(dir, { strict: true })).plugins;
}

const deployActions = [
  {
    name: "status",
    description: "Show deployment status",
    hint: "[service]",
    surface: { type: "status", title: "Deploy", state: "ok", text: "All services healthy ($ARGUMENTS)" },
  },
  {
    name: "notes",
    description: "Release notes card",
    surface: { type: "card", title: "Release $1", body: "Costs $$1 — no args used here", fields: [{ label: "Version", value: "$1" }] },
  },
  { name: "confirm", surface: { type: "form", title: "Deploy $1?", fields: [{ name: "target", label: "Target", choices: ["staging", "production"] }] } },
  { name: "static", surface: { type: "card", title: "Static", body: "No arguments here" } },
  { name: "review", description: "Ask the model to review", prompt: "Review the deploy config for $ARGUMENTS" },
  { name: "plain", prompt: "Summarise the last deploy" },
  { name: "check", run: [node, "check.js"], timeoutSeconds: 10 },
];

test("plugin commands are sorted, described and hinted; a prompt action carries its template", async () => {
  const plugins = await plugin("deploy", deployActions);
  assert.deepEqual(pluginCommands(plugins), [
    { name: "deploy:check", description: "Run the deploy check action", hint: "arguments" },
    { name: "deploy:confirm", description: "Run the deploy confirm action", hint: "arguments" },
    { name: "deploy:notes", description: "Release notes card", hint: "arguments" },
    { name: "deploy:plain", description: "Run the deploy plain action", prompt: "Summarise the last deploy" },
    { name: "deploy:review", description: "Ask the model to review", hint: "arguments", prompt: "Review the deploy config for $ARGUMENTS" },
    { name: "deploy:static", description: "Run the deploy static action" },
    { name: "deploy:status", description: "Show deployment status", hint: "[service]" },
  ]);
});

test("static surfaces expand every string without appending unused arguments", async () => {
  const plugins = await plugin("deploy", deployActions);
  const opts = { env, umask };
  assert.deepEqual(await runAction(plugins, "deploy:status", "api web", opts), {
    kind: "surface",
    surface: { type: "status", title: "Deploy", state: "ok", text: "All services healthy (api web)" },
  });
  assert.deepEqual(await runAction(plugins, "deploy:notes", '"v2.1 rc" extra', opts), {
    kind: "surface",
    surface: { type: "card", title: "Release v2.1 rc", body: "Costs $1 — no args used here", fields: [{ label: "Version", value: "v2.1 rc" }] },
  });
  assert.deepEqual(await runAction(plugins, "deploy:confirm", "api", opts), {
    kind: "surface",
    surface: { type: "form", title: "Deploy api?", fields: [{ name: "target", label: "Target", choices: ["staging", "production"] }] },
  });
  assert.deepEqual(await runAction(plugins, "deploy:static", "ignored words", opts), {
    kind: "surface",
    surface: { type: "card", title: "Static", body: "No arguments here" },
  });
});

test("a surface that expansion makes invalid becomes an error status", async () => {
  const plugins = await plugin("p", [{ name: "a", surface: { type: "card", title: "$1" } }]);
  assert.match(errorText(await runAction(plugins, "p:a", "", { env, umask })), /invalid after expanding arguments: title:/);
});

test("prompt actions expand like custom commands, passing unused arguments on", async () => {
  const plugins = await plugin("deploy", deployActions);
  assert.deepEqual(await runAction(plugins, "deploy:review", "prod", { env, umask }), { kind: "prompt", text: "Review the deploy config for prod" });
  assert.deepEqual(await runAction(plugins, "deploy:plain", "briefly", { env, umask }), { kind: "prompt", text: "Summarise the last deploy\n\nbriefly" });
});

test("unknown plugins and actions are undefined", async () => {
  const plugins = await plugin("deploy", deployActions);
  for (const name of ["deploy:nope", "nope:status", "deploy", "status"]) assert.equal(await runAction(plugins, name, "", { env, umask }), undefined);
});

const scripts = {
  "json.js": `process.stdout.write(JSON.stringify({ type: "status", title: "Check " + process.argv.slice(2).join("|"), state: "warning", text: process.cwd() + " " + process.env.SECRET_HINT + " " + process.env.REASONIX_ARGUMENTS + " " + (process.env.HOME ?? "no-home") }));`,
  "text.js": `process.stdout.write("line one\\nargs: " + process.argv.slice(2).join(",") + "\\n");`,
  "fail.js": `process.stderr.write("x".repeat(10000) + "\\nthe real reason"); process.exit(3);`,
  "slow.js": `process.stderr.write("starting\\n"); setTimeout(() => process.stdout.write("done\\n"), 60000);`,
  "badjson.js": `process.stdout.write(JSON.stringify({ type: "card" }) + "\\n");`,
  "big.js": `process.stdout.write("y".repeat(200000));`,
};
const runActions = [
  { name: "json", run: [node, "json.js", "fixed"] },
  { name: "text", run: [node, "text.js"] },
  { name: "fail", run: [node, "fail.js"] },
  // 2 s, not less: a Node process on a loaded 2-core machine took over half a second to say "starting".
  { name: "slow", run: ["node", "slow.js"], timeoutSeconds: 2 },
  { name: "badjson", run: [node, "badjson.js"] },
  { name: "big", run: [node, "big.js"] },
  { name: "missing", run: ["./no-such-program"] },
  { name: "umask", run: ["/bin/sh", "-c", 'umask; echo "$0" "$1"', "zero", "one"] },
];

test("run actions: JSON stdout is a surface; cwd, argv and env come from the plugin and caller", async () => {
  const plugins = await plugin("tools", runActions, scripts);
  const result = await runAction(plugins, "tools:json", `a "b c"`, { env, umask });
  assert.deepEqual(result, {
    kind: "surface",
    surface: { type: "status", title: "Check fixed|a|b c", state: "warning", text: `${plugins[0]!.dir} from-caller a "b c" no-home` },
  });
});

test("run actions: plain text stdout becomes a card", async () => {
  const plugins = await plugin("tools", runActions, scripts);
  assert.deepEqual(await runAction(plugins, "tools:text", "x y", { env, umask }), {
    kind: "surface",
    surface: { type: "card", title: "tools:text", body: "line one\nargs: x,y" },
  });
});

function errorText(result: Awaited<ReturnType<typeof runAction>>): string {
  assert.ok(result?.kind === "surface" && result.surface.type === "status" && result.surface.state === "error", JSON.stringify(result));
  return result.surface.text ?? "";
}

test("run actions: the process starts with the session's umask, its arguments as they were", async () => {
  const plugins = await plugin("tools", runActions, scripts);
  assert.deepEqual(await runAction(plugins, "tools:umask", "", { env, umask: 0o027 }), {
    kind: "surface",
    surface: { type: "card", title: "tools:umask", body: "0027\nzero one" },
  });
});

test("run actions: a non-zero exit is an error status with the stderr tail", async () => {
  const plugins = await plugin("tools", runActions, scripts);
  const text = errorText(await runAction(plugins, "tools:fail", "", { env, umask }));
  assert.match(text, /^Exited with code 3\./);
  assert.match(text, /the real reason\n```$/);
  assert.ok(text.length < 5000, "only the tail of stderr is kept");
});

test("run actions: a timeout kills the action and is an error status", async () => {
  const plugins = await plugin("tools", runActions, scripts);
  const started = Date.now();
  const text = errorText(await runAction(plugins, "tools:slow", "", { env, umask }));
  assert.match(text, /^Timed out after 2 s\.[\s\S]*starting/);
  // Killed at its bound, not left to finish its minute.
  assert.ok(Date.now() - started < 30_000);
});

test("run actions: cancellation, invalid surfaces, oversized output and unstartable programs", async () => {
  const plugins = await plugin("tools", runActions, scripts);
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 100);
  assert.match(errorText(await runAction(plugins, "tools:slow", "", { env, umask, signal: controller.signal })), /^Cancelled\./);
  assert.match(errorText(await runAction(plugins, "tools:badjson", "", { env, umask })), /invalid surface: title:/);
  assert.match(errorText(await runAction(plugins, "tools:missing", "", { env, umask })), /Could not start `\.\/no-such-program`/);
  const big = await runAction(plugins, "tools:big", "", { env, umask });
  assert.ok(big?.kind === "surface" && big.surface.type === "card");
  assert.match(big.surface.body ?? "", /^y{65536}\n\n\[output truncated at 65536 bytes\]$/);
});

test("run actions in the session's sandbox: their own folder readable under a hidden config folder, the rest read-only, no other process", async (t) => {
  const status = await probeSandbox(process.env.PATH);
  if (!status.available) return t.skip(`no sandbox here: ${status.reason}`);
  const script =
    "const fs=require('fs');let w='written';try{fs.writeFileSync(process.argv[2]+'/x','x')}catch(e){w=e.code}" +
    ";console.log(JSON.stringify({type:'card',title:'t',body:[fs.readFileSync('own.txt','utf8').trim(),w,fs.readdirSync('/proc').filter(n=>/^\\d+$/.test(n)).length<10].join(' ')}))";
  const plugins = await plugin("boxed", [{ name: "probe", run: [node, "probe.js"] }], { "probe.js": script, "own.txt": "my own file" });
  const dir = plugins[0]!.dir;
  const configDir = join(dir, "..");
  const outside = mkdtempSync("/var/tmp/rx-plugin-out-");
  t.after(() => rmSync(outside, { recursive: true, force: true }));
  const sandbox = (pluginDir: string) =>
    Promise.resolve(
      sandboxOf({ bwrap: status.bwrap, preset: "workspace-write", roots: [], hidden: [configDir], readable: [pluginDir], tmp: undefined, network: true }),
    );
  const result = await runAction(plugins, "boxed:probe", outside, { env, umask, sandbox });
  assert.deepEqual(result, { kind: "surface", surface: { type: "card", title: "t", body: "my own file EROFS true" } });
});
