/**
 * Agent Skills (issue 26): SKILL.md folders of the repository and of the user are listed in the
 * system prompt by name and description only; the `skill` tool loads one; `/skills` lists them.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { world } from "./fixture.js";

const systemOf = (body: { messages: Array<{ role: string; content: string }> }): string => body.messages[0]!.content;
const toolResults = (body: { messages: Array<{ role: string; content: string }> }): string[] =>
  body.messages.filter((m) => m.role === "tool").map((m) => m.content);

function skill(dir: string, front: string, body: string, files: Record<string, string> = {}): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "SKILL.md"), `---\n${front}\n---\n${body}`);
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, ".."), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
}

/** A repository (`.git` on main) with the two skills of issue 26. */
function repository(workdir: string): string {
  const root = join(workdir, "repo");
  mkdirSync(join(root, ".git"), { recursive: true });
  writeFileSync(join(root, ".git", "HEAD"), "ref: refs/heads/main\n");
  skill(
    join(root, ".agents", "skills", "release-notes"),
    "name: release-notes\ndescription: Write the release notes for a new version from the merged pull requests",
    "# Release notes\n\nRELEASE-BODY-MARKER: collect the merged PRs with scripts/collect.sh, then fill template.md.\n",
    { "template.md": "## What changed\n", "scripts/collect.sh": "git log --merges --oneline\n" },
  );
  skill(
    join(root, ".claude", "skills", "triage"),
    'name: triage\ndescription: "Label and prioritise a new issue"',
    "TRIAGE-BODY-MARKER: read the issue, add one label.\n",
  );
  return root;
}

test("the first request lists both skills' names and descriptions and neither body; the skill tool returns release-notes' body and files", async (t) => {
  const { agent, model, workdir } = await world(t);
  const root = repository(workdir);
  await agent.initialize();
  const { sessionId } = await agent.newSession(root);

  model.enqueue({ toolCalls: [{ name: "skill", arguments: { name: "release-notes" } }] }, { content: ["I will follow it."] });
  await agent.prompt(sessionId, "write the release notes for 1.2");
  const first = model.requests[0]!.body;
  const system = systemOf(first);
  assert.ok(system.includes("# Skills"), system);
  assert.ok(
    system.includes(`- release-notes: Write the release notes for a new version from the merged pull requests (${join(".agents", "skills", "release-notes")})`),
  );
  assert.ok(system.includes(`- triage: Label and prioritise a new issue (${join(".claude", "skills", "triage")})`));
  const sent = JSON.stringify(first);
  assert.ok(!sent.includes("RELEASE-BODY-MARKER") && !sent.includes("TRIAGE-BODY-MARKER"), "no body in the first request");
  assert.ok(
    first.tools.some((tool: { function: { name: string } }) => tool.function.name === "skill"),
    "the skill tool is offered",
  );

  const [result] = toolResults(model.requests[1]!.body);
  assert.ok(result, "the skill call has a result");
  assert.ok(result.includes("RELEASE-BODY-MARKER: collect the merged PRs"), result);
  assert.ok(!result.includes("description:") && !result.includes("---"), "the front matter is left out");
  assert.ok(result.includes(`Folder: ${join(root, ".agents", "skills", "release-notes")}`), result);
  assert.ok(result.includes(`- ${join("scripts", "collect.sh")}\n- template.md`), result);
  assert.ok(!result.includes("TRIAGE-BODY-MARKER"));
  assert.equal(systemOf(model.requests[1]!.body), system, "the system prompt stays byte-identical");
  const done = agent.updatesFor(sessionId).find((u) => u.sessionUpdate === "tool_call_update" && u.status === "completed");
  assert.ok(done, "the call completed");
});

test("bad front matter and a skill folder linking outside are skipped with notices naming them; a clash says which was hidden; /skills lists it all", async (t) => {
  const outside = realpathSync(mkdtempSync(join(tmpdir(), "rx-skill-outside-")));
  t.after(() => rmSync(outside, { recursive: true, force: true }));
  const { agent, model, workdir, home } = await world(t);
  const root = repository(workdir);
  const agents = join(root, ".agents", "skills");
  // No front matter at all, and front matter without a description.
  mkdirSync(join(agents, "plain"));
  writeFileSync(join(agents, "plain", "SKILL.md"), "Just text, no front matter.\n");
  skill(join(agents, "nodesc"), "name: nodesc", "body\n");
  // A skill folder that is a link out of the repository: nothing of it is read.
  skill(join(outside, "leak"), "name: leak\ndescription: OUTSIDE-DESCRIPTION", "OUTSIDE-BODY-MARKER\n");
  symlinkSync(join(outside, "leak"), join(agents, "leak"));
  // The same name in the user's folder and in the project's: the project's wins.
  skill(join(home.dir, "skills", "triage"), "name: triage\ndescription: USER-TRIAGE", "user body\n");
  skill(join(home.dir, "skills", "deploy"), "name: deploy\ndescription: Deploy the service to staging", "DEPLOY-BODY\n");
  // .reasonix/skills is more specific than .agents/skills.
  skill(join(root, ".reasonix", "skills", "release-notes"), "name: release-notes\ndescription: Our own release notes recipe", "OURS\n");

  await agent.initialize();
  const { sessionId } = await agent.newSession(root);
  const notice = await agent.waitForUpdate((u) => u.sessionId === sessionId && u.update._meta?.["reasonix.io"]?.kind === "notice");
  const said: string = notice.update.content.text;
  assert.ok(said.includes(`Skipped ${join(".agents", "skills", "plain", "SKILL.md")}: it has no front matter`), said);
  assert.ok(said.includes(`Skipped ${join(".agents", "skills", "nodesc", "SKILL.md")}: its front matter has no description.`), said);
  assert.ok(
    said.includes(
      `Skipped ${join(".agents", "skills", "leak", "SKILL.md")}: it links outside the repository and the session's folders (to ${join(outside, "leak", "SKILL.md")}).`,
    ),
    said,
  );

  model.enqueue({ toolCalls: [{ name: "skill", arguments: { name: "leak" } }] }, { content: ["ok"] });
  await agent.prompt(sessionId, "hi");
  const system = systemOf(model.requests[0]!.body);
  assert.ok(system.includes(`- release-notes: Our own release notes recipe (${join(".reasonix", "skills", "release-notes")})`), system);
  assert.ok(!system.includes("from the merged pull requests"), "the hidden one is not listed");
  assert.ok(system.includes("- triage: Label and prioritise a new issue") && !system.includes("USER-TRIAGE"));
  assert.ok(system.includes(`- deploy: Deploy the service to staging (${join(home.dir, "skills", "deploy")})`), "the user's own skill");
  assert.ok(!system.includes("plain") && !system.includes("nodesc"));
  assert.match(toolResults(model.requests[1]!.body)[0]!, /^No skill named "leak"\. The skills are: /);
  const all = JSON.stringify(model.requests);
  assert.ok(!all.includes("OUTSIDE-DESCRIPTION") && !all.includes("OUTSIDE-BODY-MARKER"), "nothing of the linked folder reached the model");

  const from = agent.updates.length;
  await agent.prompt(sessionId, "/skills");
  assert.equal(model.requests.length, 2, "/skills asks no model");
  const listed = agent.textOf(sessionId, "agent_message_chunk", from);
  assert.ok(listed.includes(`- \`release-notes\` — Our own release notes recipe — ${join(".reasonix", "skills", "release-notes")}`), listed);
  assert.ok(listed.includes(`- \`deploy\` — Deploy the service to staging — ${join(home.dir, "skills", "deploy")}`), listed);
  assert.ok(
    listed.includes(`- \`release-notes\` in ${join(".agents", "skills", "release-notes")} (hidden by ${join(".reasonix", "skills", "release-notes")})`),
    listed,
  );
  assert.ok(listed.includes(`- \`triage\` in ${join(home.dir, "skills", "triage")} (hidden by ${join(".claude", "skills", "triage")})`), listed);
  assert.ok(listed.includes(`Skipped ${join(".agents", "skills", "leak", "SKILL.md")}: it links outside`), listed);
});

test("the skill tool asks nothing in read-only, a user skill outside the workspace too; an unknown name is a clear tool error; /reload takes a new skill", async (t) => {
  const { agent, model, workdir, home } = await world(t);
  const root = repository(workdir);
  skill(join(home.dir, "skills", "deploy"), "name: deploy\ndescription: Deploy the service to staging", "DEPLOY-BODY-MARKER\n", { "check.sh": "true\n" });
  await agent.initialize();
  const { sessionId } = await agent.newSession(root);
  await agent.rpc.request("session/set_config_option", { sessionId, configId: "tool_approval", value: "read-only" });

  model.enqueue(
    { toolCalls: [{ name: "skill", arguments: { name: "deploy" } }] },
    { toolCalls: [{ name: "skill", arguments: { name: "nope" } }] },
    { content: ["done"] },
  );
  await agent.prompt(sessionId, "deploy it");
  assert.equal(agent.agentRequests.filter((r) => r.method === "session/request_permission").length, 0, "no question");
  const results = toolResults(model.requests[2]!.body);
  assert.ok(results[0]!.includes("DEPLOY-BODY-MARKER") && results[0]!.includes("- check.sh"), results[0]);
  assert.equal(results[1], 'No skill named "nope". The skills are: deploy, release-notes, triage.');
  const failed = agent.updatesFor(sessionId).filter((u) => u.sessionUpdate === "tool_call_update" && u.status === "failed");
  assert.equal(failed.length, 1, "the unknown name fails the call");

  // A skill added meanwhile is not in the prompt (fixed for the session) until /reload.
  skill(join(root, ".claude", "skills", "migrate"), "name: migrate\ndescription: Write a database migration", "MIGRATE-BODY\n");
  model.enqueue({ content: ["again"] });
  await agent.prompt(sessionId, "again");
  assert.equal(systemOf(model.requests[3]!.body), systemOf(model.requests[0]!.body), "unchanged without a reload");
  const from = agent.updates.length;
  await agent.prompt(sessionId, "/reload");
  assert.match(agent.textOf(sessionId, "agent_message_chunk", from), /Skills: deploy, migrate, release-notes, triage \(`\/skills` lists them\)\./);
  model.enqueue({ content: ["third"] });
  await agent.prompt(sessionId, "third");
  const after = systemOf(model.requests[4]!.body);
  assert.ok(after.includes("- migrate: Write a database migration") && !after.includes("MIGRATE-BODY"), after);
});
