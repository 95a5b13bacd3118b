import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { world } from "./fixture.js";

/** A repository (a `.git` folder on branch main) with the workspace one folder below its root. */
function repository(workdir: string): { root: string; pkg: string } {
  const root = join(workdir, "repo");
  const pkg = join(root, "packages", "app");
  mkdirSync(join(root, ".git"), { recursive: true });
  writeFileSync(join(root, ".git", "HEAD"), "ref: refs/heads/main\n");
  mkdirSync(pkg, { recursive: true });
  writeFileSync(join(root, "AGENTS.md"), "Root rule: run npm test before you finish.\n");
  writeFileSync(join(pkg, "AGENTS.md"), "Package rule: use tabs in this package.\n");
  return { root, pkg };
}

const systemOf = (body: { messages: Array<{ role: string; content: string }> }): string => body.messages[0]!.content;

test("AGENTS.md of the workspace and of its repository root reach the system prompt root first, fixed until reloadExtensions", async (t) => {
  const { agent, model, workdir, home } = await world(t);
  const { root, pkg } = repository(workdir);
  writeFileSync(join(home.dir, "AGENTS.md"), "User rule: answer in English.\n");
  const init = await agent.initialize();
  const reload = init.agentCapabilities._meta["reasonix.io"].sessionReloadExtensions.method as string;
  const { sessionId } = await agent.newSession(pkg);

  model.enqueue({ toolCalls: [{ name: "list_directory", arguments: {} }] }, { content: ["done"] });
  await agent.prompt(sessionId, "first");
  const first = systemOf(model.requests[0]!.body);
  const at = (s: string) => first.indexOf(s);
  assert.ok(at(`## ${join(root, "AGENTS.md")}\n\nRoot rule: run npm test before you finish.`) > 0, "the root's file, with its path");
  assert.ok(at(`## ${join(pkg, "AGENTS.md")}\n\nPackage rule: use tabs in this package.`) > 0, "the workspace's file, with its path");
  assert.ok(at(`## ${join(home.dir, "AGENTS.md")}`) > 0, "the user's file from the config folder");
  assert.ok(at("User rule") < at("Root rule") && at("Root rule") < at("Package rule"), "user, then root, then workspace");
  assert.match(first, /Git repository: yes, at .*, on branch main/);
  assert.ok(first.includes(`  - ${pkg}`), "the workspace folder is named");

  // The file changes on disk: the session's prompt does not (the prefix cache), in this turn or the next.
  writeFileSync(join(pkg, "AGENTS.md"), "Package rule: use two spaces now.\n");
  model.enqueue({ content: ["again"] });
  await agent.prompt(sessionId, "second");
  assert.equal(model.requests.length, 3);
  for (const r of model.requests.slice(1)) assert.equal(systemOf(r.body), first, "byte-identical system prompt");
  const [a, b] = [model.requests[1]!.body.messages, model.requests[2]!.body.messages];
  assert.equal(JSON.stringify(b.slice(0, a.length)), JSON.stringify(a), "the whole prefix repeats");

  const from = agent.updates.length;
  assert.deepEqual(await agent.rpc.request(reload, { sessionId }), {});
  assert.match(agent.textOf(sessionId, "agent_message_chunk", from), /Project instructions reloaded[\s\S]*packages\/app\/AGENTS\.md/);
  model.enqueue({ content: ["third"] });
  await agent.prompt(sessionId, "third");
  const after = systemOf(model.requests[3]!.body);
  assert.ok(after.includes("Package rule: use two spaces now."), "the new text");
  assert.ok(!after.includes("use tabs"), "the old text is gone");
  assert.ok(after.includes("Root rule"));
  assert.equal(model.requests[3]!.body.messages.filter((m: { role: string }) => m.role === "system").length, 1, "one system message");
});

test("/reload answers locally with the files it loaded; /init asks the model to write AGENTS.md through write_file and its permission", async (t) => {
  const { agent, model, workdir } = await world(t);
  const { pkg } = repository(workdir);
  await agent.initialize();
  const { sessionId } = await agent.newSession(pkg, {});
  await agent.rpc.request("session/set_config_option", { sessionId, configId: "tool_approval", value: "read-only" });

  const from = agent.updates.length;
  await agent.prompt(sessionId, "/reload");
  assert.equal(model.requests.length, 0, "no model request");
  assert.match(agent.textOf(sessionId, "agent_message_chunk", from), /Project instructions unchanged\.\n- .*repo\/AGENTS\.md\n- .*app\/AGENTS\.md/);
  const statusFrom = agent.updates.length;
  await agent.prompt(sessionId, "/status");
  assert.ok(
    agent
      .textOf(sessionId, "agent_message_chunk", statusFrom)
      .includes(`- Project instructions: ${join(workdir, "repo", "AGENTS.md")}, ${join(pkg, "AGENTS.md")}`),
  );

  model.enqueue(
    { toolCalls: [{ name: "write_file", arguments: { path: "AGENTS.md", content: "# App\n\nRun `npm test`.\n" } }] },
    { content: ["Wrote AGENTS.md."] },
  );
  await agent.prompt(sessionId, "/init");
  assert.match(model.requests[0]!.body.messages.at(-1).content, /Survey this repository and write a starter AGENTS\.md/);
  const asked = agent.agentRequests.filter((r) => r.method === "session/request_permission");
  assert.equal(asked.length, 1, "the write asked (read-only preset)");
  assert.match(asked[0]!.params.toolCall.title, /AGENTS\.md/);
  assert.equal(readFileSync(join(pkg, "AGENTS.md"), "utf8"), "# App\n\nRun `npm test`.\n");
  assert.ok(existsSync(join(pkg, "AGENTS.md")));
});

test("CLAUDE.md at the repository root reaches the system prompt with its path, between AGENTS.md and REASONIX.md; a CLAUDE.md linking to AGENTS.md is said once", async (t) => {
  const { agent, model, workdir } = await world(t);
  const { root, pkg } = repository(workdir);
  writeFileSync(join(root, "CLAUDE.md"), "Claude rule: keep commits small.\n");
  writeFileSync(join(root, "REASONIX.md"), "Reasonix rule: the last word.\n");
  // The common setup: CLAUDE.md as a link to the AGENTS.md beside it.
  symlinkSync("AGENTS.md", join(pkg, "CLAUDE.md"));
  await agent.initialize();
  const { sessionId } = await agent.newSession(pkg);
  model.enqueue({ content: ["ok"] });
  await agent.prompt(sessionId, "hi");
  const system = systemOf(model.requests[0]!.body);
  const at = (s: string) => system.indexOf(s);
  assert.ok(at(`## ${join(root, "CLAUDE.md")}\n\nClaude rule: keep commits small.`) > 0, system);
  assert.ok(
    at("Root rule") < at("Claude rule") && at("Claude rule") < at("Reasonix rule") && at("Reasonix rule") < at("Package rule"),
    "AGENTS.md, CLAUDE.md, REASONIX.md, root first",
  );
  assert.equal(system.split("Package rule: use tabs").length, 2, "the linked CLAUDE.md adds nothing");
  assert.ok(!system.includes(`## ${join(pkg, "CLAUDE.md")}`));
});
