import { after, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadPlugins, PluginLoadError } from "./manifest.js";

/** The plugin folders the tests made, removed when the file is done. */
const made: string[] = [];
after(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

function pluginsDir(plugins: Record<string, unknown>): string {
  const dir = mkdtempSync(join(tmpdir(), "rx-plugins-"));
  made.push(dir);
  for (const [folder, manifest] of Object.entries(plugins)) {
    mkdirSync(join(dir, folder));
    if (manifest !== undefined) writeFileSync(join(dir, folder, "manifest.json"), typeof manifest === "string" ? manifest : JSON.stringify(manifest));
  }
  return dir;
}

const deploy = {
  name: "deploy",
  description: "Deployment helpers",
  version: "1.0.0",
  actions: [
    {
      name: "status",
      description: "Show deployment status",
      hint: "[service]",
      surface: { type: "status", title: "Deploy", state: "ok", text: "All services healthy ($ARGUMENTS)" },
    },
    { name: "notes", surface: { type: "card", title: "Release $1", body: "Markdown body", fields: [{ label: "Version", value: "$1" }] } },
    { name: "confirm", surface: { type: "form", title: "Deploy $1?", fields: [{ name: "target", label: "Target", choices: ["staging", "production"] }] } },
    { name: "review", prompt: "Review the deploy config for $ARGUMENTS" },
    { name: "check", run: ["node", "check.js"], timeoutSeconds: 10 },
  ],
};

test("valid plugins of every action kind load, sorted, with their folder", async () => {
  const dir = pluginsDir({ zeta: { name: "zeta", actions: [] }, deploy, ".hidden": undefined });
  writeFileSync(join(dir, "README.txt"), "not a plugin");
  const { plugins, errors } = await loadPlugins(dir, { strict: true });
  assert.deepEqual(errors, []);
  assert.deepEqual(
    plugins.map((p) => p.name),
    ["deploy", "zeta"],
  );
  assert.equal(plugins[0]!.dir, join(dir, "deploy"));
  assert.deepEqual(
    plugins[0]!.actions.map((a) => a.name),
    ["status", "notes", "confirm", "review", "check"],
  );
  const confirm = plugins[0]!.actions[2]!.surface;
  assert.equal(confirm?.type, "form");
});

test("a missing plugins folder is no plugins", async () => {
  assert.deepEqual(await loadPlugins(join(tmpdir(), "rx-no-such-plugins-folder"), { strict: true }), { plugins: [], errors: [], skipped: [] });
});

test("a plugin or manifest linking outside the config folder is skipped and named, even by a strict reload; one linked from inside loads", async (t) => {
  const base = realpathSync(mkdtempSync(join(tmpdir(), "rx-plugins-")));
  t.after(() => rmSync(base, { recursive: true, force: true }));
  const config = join(base, "config");
  const outside = join(base, "outside");
  const plugins = join(config, "plugins");
  const manifest = (name: string) => JSON.stringify({ name, actions: [{ name: "go", prompt: "go" }] });
  for (const d of [join(plugins, "real"), join(plugins, "leaky"), join(config, "src", "linked"), join(outside, "away")]) mkdirSync(d, { recursive: true });
  writeFileSync(join(plugins, "real", "manifest.json"), manifest("real"));
  writeFileSync(join(config, "src", "linked", "manifest.json"), manifest("linked"));
  symlinkSync(join(config, "src", "linked"), join(plugins, "linked"));
  writeFileSync(join(outside, "away", "manifest.json"), manifest("away"));
  symlinkSync(join(outside, "away"), join(plugins, "away"));
  writeFileSync(join(outside, "leaky.json"), manifest("leaky"));
  symlinkSync(join(outside, "leaky.json"), join(plugins, "leaky", "manifest.json"));

  const loaded = await loadPlugins(plugins, { strict: true });
  assert.deepEqual(
    loaded.plugins.map((p) => p.name),
    ["linked", "real"],
  );
  assert.deepEqual(loaded.errors, []);
  assert.deepEqual(loaded.skipped, [
    `Skipped ${join(plugins, "away")}: it links outside the config folder (to ${join(outside, "away")}).`,
    `Skipped ${join(plugins, "leaky", "manifest.json")}: it links outside the config folder (to ${join(outside, "leaky.json")}).`,
  ]);

  // The plugins folder itself a link out: nothing in it is looked at.
  const other = join(base, "other");
  mkdirSync(other);
  symlinkSync(plugins, join(other, "plugins"));
  assert.deepEqual(await loadPlugins(join(other, "plugins"), { strict: true }), {
    plugins: [],
    errors: [],
    skipped: [`Skipped ${join(other, "plugins")}: it links outside the config folder (to ${plugins}).`],
  });
});

const broken: Record<string, { manifest: unknown; problem: RegExp }> = {
  badjson: { manifest: "{ not json", problem: /not valid JSON/ },
  unknownkey: { manifest: { name: "unknownkey", actions: [{ name: "a", prompt: "x", colour: "red" }] }, problem: /unknown key "colour" at actions\.0/ },
  dupaction: {
    manifest: {
      name: "dupaction",
      actions: [
        { name: "a", prompt: "x" },
        { name: "a", prompt: "y" },
      ],
    },
    problem: /duplicate action "a"/,
  },
  misnamed: { manifest: { name: "other", actions: [] }, problem: /manifest name "other" does not match its folder name/ },
  twokinds: {
    manifest: { name: "twokinds", actions: [{ name: "a", prompt: "x", run: ["true"] }] },
    problem: /exactly one of "surface", "prompt" or "run" \(has prompt, run\)/,
  },
  badsurface: { manifest: { name: "badsurface", actions: [{ name: "a", surface: { type: "banner", title: "x" } }] }, problem: /actions\.0\.surface\.type/ },
  badstate: {
    manifest: { name: "badstate", actions: [{ name: "a", surface: { type: "status", title: "x", state: "great" } }] },
    problem: /actions\.0\.surface\.state/,
  },
  baddefault: {
    manifest: { name: "baddefault", actions: [{ name: "a", surface: { type: "form", title: "x", fields: [{ name: "f", choices: ["a"], default: "b" }] } }] },
    problem: /default must be one of the choices/,
  },
  badname: { manifest: { name: "badname", actions: [{ name: "a:b", prompt: "x" }] }, problem: /actions\.0\.name/ },
  stray: { manifest: undefined, problem: /has no manifest\.json/ },
};

for (const [folder, { manifest, problem }] of Object.entries(broken)) {
  test(`broken plugin "${folder}": strict loading throws naming it, lenient loading skips it`, async () => {
    const dir = pluginsDir({ deploy, [folder]: manifest });
    await assert.rejects(loadPlugins(dir, { strict: true }), (err: unknown) => {
      assert.ok(err instanceof PluginLoadError && err instanceof Error);
      assert.match(err.message, new RegExp(`plugin "${folder}"`));
      assert.match(err.message, problem);
      return true;
    });
    const { plugins, errors } = await loadPlugins(dir, { strict: false });
    assert.deepEqual(
      plugins.map((p) => p.name),
      ["deploy"],
    );
    assert.equal(errors.length, 1);
    assert.match(errors[0]!, new RegExp(`^plugin "${folder}" \\(`));
    assert.match(errors[0]!, problem);
  });
}

test("strict errors list every broken plugin", async () => {
  const dir = pluginsDir({ a: "[", b: { name: "b", actions: [{ name: "x" }] } });
  await assert.rejects(loadPlugins(dir, { strict: true }), (err: unknown) => {
    assert.ok(err instanceof PluginLoadError);
    assert.equal(err.errors.length, 2);
    assert.match(err.message, /plugin "a".*plugin "b".*has none/s);
    return true;
  });
});
