import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { waitForDaemonPid, waitForPidExit } from "../support/harness.js";
import type { Agent } from "../support/harness.js";
import { world, within, test, processTest } from "./fixture.js";

/** The vendor names, read from initialize as a client must (never hard-coded). */
async function discover(agent: Agent, extra: object = {}) {
  const init = await agent.initialize(extra);
  const meta = init.agentCapabilities._meta["reasonix.io"];
  return {
    steer: meta.sessionSteer.method as string,
    inbox: meta.sessionInbox.methods as Record<string, string>,
    reload: meta.sessionReloadExtensions.method as string,
    status: meta.sessionStatus.method as string,
    surface: meta.extensionSurface,
    init,
  };
}

test("discovery advertises every extension by name", async (t) => {
  const { agent } = await world(t);
  const names = await discover(agent);
  assert.equal(names.steer, "_reasonix.io/session/steer");
  assert.equal(names.init.agentCapabilities._meta["reasonix.io"].sessionInbox.schemaVersion, 1);
  assert.deepEqual(Object.keys(names.inbox).sort(), ["delete", "enqueue", "get", "list", "move", "refresh", "retry", "setPaused", "update"]);
  assert.equal(names.reload, "_reasonix.io/session/reloadExtensions");
  assert.equal(names.surface.supported, true);
  assert.deepEqual(names.init.agentCapabilities._meta["_reasonix.io/session/status"], { schemaVersion: 1 });
  assert.deepEqual(names.init.agentCapabilities._meta["_reasonix.io/session/status_update"], { schemaVersion: 1 });
});

test("a steer sent mid-turn is accepted and the next request ends with it, the prefix byte-identical", async (t) => {
  const { agent, model, workdir } = await world(t);
  const { steer } = await discover(agent);
  const { sessionId } = await agent.newSession(workdir);
  model.enqueue(
    { content: ["Looking ", "around ", "first."], toolCalls: [{ name: "list_directory", arguments: {} }], chunkDelayMs: 150 },
    { content: ["Using email, as you said."] },
  );
  const pending = agent.prompt(sessionId, "implement login");
  await agent.waitForUpdate((u) => u.update.sessionUpdate === "agent_message_chunk");
  const r = await agent.rpc.request(steer, { sessionId, prompt: [{ type: "text", text: "use email instead of username" }] });
  assert.equal(r.disposition, "steer_accepted");
  assert.ok(typeof r.itemId === "string");
  assert.equal((await pending).stopReason, "end_turn");
  assert.equal(model.requests.length, 2);
  const [first, second] = [model.requests[0]!.body.messages, model.requests[1]!.body.messages];
  assert.equal(JSON.stringify(second.slice(0, first.length)), JSON.stringify(first));
  assert.deepEqual(second.at(-1), { role: "user", content: "use email instead of username" });
  assert.ok(agent.updatesFor(sessionId).some((u) => u.sessionUpdate === "user_message_chunk" && u.content.text === "use email instead of username"));
});

test("a steer with no active turn queues as a follow-up and runs next; bad steers get the right codes", async (t) => {
  const { agent, model, workdir } = await world(t);
  const { steer } = await discover(agent);
  const { sessionId } = await agent.newSession(workdir);
  model.enqueue({ content: ["follow-up done"] });
  const r = await agent.rpc.request(steer, { sessionId, prompt: [{ type: "text", text: "also add tests" }] });
  assert.equal(r.disposition, "queued_followup");
  await model.waitForRequests(1);
  assert.equal(model.requests[0]!.body.messages.at(-1).content, "also add tests");
  await agent.waitForUpdate((u) => u.update.sessionUpdate === "agent_message_chunk" && u.update.content.text === "follow-up done");

  const empty = await agent.rawRequest({ id: "e", method: steer, params: { sessionId, prompt: [] } });
  assert.equal(empty.error.code, -32602);
  const unknown = await agent.rawRequest({ id: "u", method: steer, params: { sessionId: "nope", prompt: [{ type: "text", text: "x" }] } });
  assert.equal(unknown.error.code, -32602);
  const bare = await agent.rawRequest({ id: "b", method: "session/steer", params: { sessionId, prompt: [{ type: "text", text: "x" }] } });
  assert.equal(bare.error.code, -32601);
});

test("inbox: idempotent enqueue, previews only, move, update and delete of pending items, pause, capacity", async (t) => {
  const { agent, model, workdir } = await world(t);
  const { inbox } = await discover(agent);
  const { sessionId } = await agent.newSession(workdir);
  await agent.rpc.request(inbox.setPaused!, { sessionId, paused: true });
  const a = await agent.rpc.request(inbox.enqueue!, { sessionId, text: "first follow-up with a long body ".repeat(10), idempotencyKey: "k-a" });
  assert.equal(a.disposition, "queued_followup");
  assert.equal(a.paused, true);
  assert.equal(a.idempotent, false);
  const again = await agent.rpc.request(inbox.enqueue!, { sessionId, text: "first follow-up with a long body ".repeat(10), idempotencyKey: "k-a" });
  assert.equal(again.itemId, a.itemId);
  assert.equal(again.idempotent, true);
  const clash = await agent.rawRequest({ id: "clash", method: inbox.enqueue, params: { sessionId, text: "other text", idempotencyKey: "k-a" } });
  assert.equal(clash.error.code, -32600);
  assert.match(clash.error.message, /idempotencyKey/);
  const b = await agent.rpc.request(inbox.enqueue!, { sessionId, text: "second" });
  const c = await agent.rpc.request(inbox.enqueue!, { sessionId, text: "third" });

  const list = await agent.rpc.request(inbox.list!, { sessionId });
  assert.equal(list.paused, true);
  assert.deepEqual(
    list.items.map((i: { itemId: string }) => i.itemId),
    [a.itemId, b.itemId, c.itemId],
  );
  for (const item of list.items) {
    assert.equal(item.text, undefined, "no bodies in a list");
    assert.ok(item.preview.length <= 120);
    assert.ok(item.byteSize > 0);
  }
  assert.equal(list.capacity.maxItems, 64);
  const got = await agent.rpc.request(inbox.get!, { sessionId, itemId: b.itemId });
  assert.equal(got.envelope.text, "second");

  await agent.rpc.request(inbox.move!, { sessionId, itemId: c.itemId, toIndex: 0 });
  await agent.rpc.request(inbox.update!, { sessionId, itemId: b.itemId, text: "second, edited" });
  await agent.rpc.request(inbox.delete!, { sessionId, itemId: a.itemId });
  const missing = await agent.rawRequest({ id: "gone", method: inbox.get, params: { sessionId, itemId: a.itemId } });
  assert.equal(missing.error.code, -32600);
  assert.deepEqual(
    (await agent.rpc.request(inbox.list!, { sessionId })).items.map((i: { itemId: string }) => i.itemId),
    [c.itemId, b.itemId],
  );
  assert.equal(model.requests.length, 0, "nothing runs while paused");

  const huge = await agent.rawRequest({ id: "huge", method: inbox.enqueue, params: { sessionId, text: "x".repeat(4 * 1024 * 1024 + 1) } });
  assert.equal(huge.error.code, -32600);
  assert.match(huge.error.message, /too large/);
  for (let i = 0; i < 62; i++) await agent.rpc.request(inbox.enqueue!, { sessionId, text: `filler ${i}` });
  const full = await agent.rawRequest({ id: "full", method: inbox.enqueue, params: { sessionId, text: "one too many" } });
  assert.equal(full.error.code, -32600);
  assert.match(full.error.message, /inbox full/);
  const fillers = (await agent.rpc.request(inbox.list!, { sessionId })).items.slice(2);
  for (const f of fillers) await agent.rpc.request(inbox.delete!, { sessionId, itemId: f.itemId });

  model.enqueue({ content: ["ran third"] }, { content: ["ran second"] });
  assert.deepEqual(await agent.rpc.request(inbox.setPaused!, { sessionId, paused: false }), { paused: false });
  await model.waitForRequests(2);
  assert.equal(model.requests[0]!.body.messages.at(-1).content, "third");
  assert.equal(model.requests[1]!.body.messages.at(-1).content, "second, edited");
  await agent.waitForUpdate((u) => u.update.sessionUpdate === "agent_message_chunk" && u.update.content.text === "ran second");
  // A running or finished item is no longer pending: edits are refused.
  const late = await agent.rawRequest({ id: "late", method: inbox.update, params: { sessionId, itemId: b.itemId, text: "too late" } });
  assert.equal(late.error.code, -32600);
});

// Process connector only: it kills the daemon's process.
processTest("kill -9 with queued items: after restart they are listed, paused and recovered, none ran; unpaused they run in order once", async (t) => {
  const { agent, model, workdir, home, spawn } = await world(t, { connector: "process" });
  const { inbox } = await discover(agent);
  const { sessionId } = await agent.newSession(workdir);
  model.enqueue({ content: ["busy "], hang: true });
  agent.prompt(sessionId, "a long turn").catch(() => undefined);
  await agent.waitForUpdate((u) => u.update.sessionUpdate === "agent_message_chunk");
  for (const text of ["one", "two", "three"]) {
    const r = await agent.rpc.request(inbox.enqueue!, { sessionId, text, idempotencyKey: `key-${text}` });
    assert.equal(r.disposition, "queued_followup");
  }
  const old = await waitForDaemonPid(home.dir);
  process.kill(old, "SIGKILL");
  await waitForPidExit(old, 5000);
  // The editor closes the window that lost its daemon, so no shim is left waiting to rejoin the next.
  await agent.closeStdin();

  const next = spawn();
  const names = await discover(next);
  const list = await next.rpc.request(names.inbox.list!, { sessionId });
  assert.equal(list.paused, true);
  assert.equal(list.recovered, true);
  assert.equal(list.recoveredCount, 3);
  assert.deepEqual(
    list.items.map((i: { preview: string }) => i.preview),
    ["one", "two", "three"],
  );
  // Paused means nothing is dispatched; the status says so, and no request reached the model.
  const idle = await next.rpc.request(names.status, { sessionId });
  assert.equal(idle.state, "idle");
  assert.equal(idle.inbox.paused, true);
  assert.equal(model.requests.length, 1, "nothing ran on its own");
  // The same idempotency key still answers with the original item after the restart.
  const replay = await next.rpc.request(names.inbox.enqueue!, { sessionId, text: "two", idempotencyKey: "key-two" });
  assert.equal(replay.idempotent, true);

  await next.rpc.request("session/resume", { sessionId, cwd: workdir, mcpServers: [] });
  model.respond = (req) => ({ content: [`did ${req.body.messages.at(-1).content}`] });
  await next.rpc.request(names.inbox.setPaused!, { sessionId, paused: false });
  await next.waitForUpdate((u) => u.update.sessionUpdate === "agent_message_chunk" && u.update.content.text === "did three");
  const asked = model.requests.slice(1).map((r) => r.body.messages.at(-1).content);
  assert.deepEqual(asked, ["one", "two", "three"]);
  // The last item leaves the inbox when its turn has ended, just after its final chunk.
  let after = await next.rpc.request(names.inbox.list!, { sessionId });
  for (let i = 0; i < 50 && after.items.length > 0; i++) {
    await new Promise((r) => setTimeout(r, 50));
    after = await next.rpc.request(names.inbox.list!, { sessionId });
  }
  assert.deepEqual(after.items, []);
  assert.equal(model.requests.length, 4, "each item ran exactly once");
  assert.equal(after.recovered, false);
});

function writePlugin(home: string, name: string, manifest: unknown): void {
  const dir = join(home, "plugins", name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "manifest.json"), typeof manifest === "string" ? manifest : JSON.stringify(manifest));
}

test("reloadExtensions during a turn is queued and applied after; a broken manifest fails and the old commands stay", async (t) => {
  const { agent, model, workdir, home } = await world(t);
  writePlugin(home.dir, "deploy", {
    name: "deploy",
    actions: [{ name: "status", description: "Deployment status", surface: { type: "status", title: "Deploy", state: "ok", text: "All healthy" } }],
  });
  const { reload } = await discover(agent);
  const { sessionId } = await agent.newSession(workdir);
  const menu = await agent.waitForUpdate((u) => u.update.sessionUpdate === "available_commands_update");
  assert.ok(menu.update.availableCommands.some((c: { name: string }) => c.name === "deploy:status"));

  writePlugin(home.dir, "extra", { name: "extra", actions: [{ name: "hello", description: "Say hello", prompt: "Say hello to $ARGUMENTS" }] });
  model.enqueue({ content: ["slow ", "turn"], chunkDelayMs: 300 });
  const from = agent.updates.length;
  const turn = agent.prompt(sessionId, "work");
  await agent.waitForUpdate((u) => u.update.sessionUpdate === "agent_message_chunk", undefined, from);
  assert.deepEqual(await agent.rpc.request(reload, { sessionId }), { queued: true });
  assert.ok(!agent.updatesFor(sessionId, from).some((u) => u.sessionUpdate === "available_commands_update"), "nothing applied mid-turn");
  await turn;
  const fresh = await agent.waitForUpdate((u) => u.update.sessionUpdate === "available_commands_update", undefined, from);
  assert.ok(fresh.update.availableCommands.some((c: { name: string }) => c.name === "extra:hello"));

  writePlugin(home.dir, "extra", "{ not json");
  const broken = await agent.rawRequest({ id: "rl", method: reload, params: { sessionId } });
  assert.ok(broken.error);
  assert.match(broken.error.message, /extra/);
  assert.match(broken.error.message, /previous extensions stay active/);
  model.enqueue({ content: ["hello there"] });
  await agent.prompt(sessionId, "/extra:hello world");
  assert.equal(model.requests.at(-1)!.body.messages.at(-1).content, "Say hello to world", "the old command set still works");
});

test("plugin surfaces: text fallback for plain clients, structured payloads for opted-in ones, forms as permission requests", async (t) => {
  const { agent, workdir, home, spawn } = await world(t);
  writePlugin(home.dir, "deploy", {
    name: "deploy",
    actions: [
      {
        name: "notes",
        description: "Release notes",
        surface: { type: "card", title: "Release $1", body: "Shipped.", fields: [{ label: "Version", value: "$1" }] },
      },
      {
        name: "confirm",
        description: "Confirm",
        surface: { type: "form", title: "Deploy where?", fields: [{ name: "target", choices: ["staging", "production"] }] },
      },
    ],
  });
  await discover(agent);
  const { sessionId } = await agent.newSession(workdir);
  const fancy = spawn();
  await discover(fancy, { clientCapabilities: { _meta: { "reasonix.io": { extensionSurface: { supported: true, schemaVersion: 1 } } } } });
  await fancy.rpc.request("session/resume", { sessionId, cwd: workdir, mcpServers: [] });

  await agent.prompt(sessionId, "/deploy:notes 2.0");
  assert.match(agent.textOf(sessionId), /\*\*Release 2\.0\*\*[\s\S]*Version: 2\.0/);
  const structured = await fancy.waitForLine((m) => m.method === "_reasonix.io/session/extension_surface");
  assert.deepEqual(structured.params.surface, { type: "card", title: "Release 2.0", body: "Shipped.", fields: [{ label: "Version", value: "2.0" }] });
  assert.ok(!fancy.textOf(sessionId).includes("Release 2.0"), "the opted-in window gets the payload, not the text");

  agent.onPermission = (p) => ({ outcome: { outcome: "selected", optionId: p.options.find((o: { name: string }) => o.name === "production").optionId } });
  await agent.prompt(sessionId, "/deploy:confirm");
  const asked = agent.agentRequests.find((r) => r.method === "session/request_permission")!;
  assert.equal(asked.params.toolCall.title, "Deploy where?");
  assert.match(agent.textOf(sessionId), /submitted: target=production/);
});

test("usage_update after each round; cost matches the price table to the cent; status carries the costQuote", async (t) => {
  // A window that holds the scripted 3.5M-token round (a smaller one would compact before the next).
  const bigWindow = (dir: string) =>
    writeFileSync(
      join(dir, "config.json"),
      JSON.stringify({
        providers: [
          { name: "deepseek", baseUrl: "https://api.deepseek.com", apiKeyEnv: "DEEPSEEK_API_KEY", models: ["deepseek-v4-flash"], contextWindow: 4_000_000 },
        ],
      }),
    );
  const { agent, model, workdir } = await world(t, { prepare: bigWindow });
  // Status updates are vendor traffic: only a client that opted in gets them.
  const { status } = await discover(agent, { clientCapabilities: { _meta: { "reasonix.io": {} } } });
  const { sessionId } = await agent.newSession(workdir);
  model.enqueue(
    {
      toolCalls: [{ name: "list_directory", arguments: {} }],
      usage: { prompt_tokens: 3_000_000, prompt_cache_hit_tokens: 1_000_000, prompt_cache_miss_tokens: 2_000_000, completion_tokens: 500_000 },
    },
    { content: ["done"], usage: { prompt_tokens: 1_000, prompt_cache_hit_tokens: 1_000, prompt_cache_miss_tokens: 0, completion_tokens: 100 } },
  );
  await agent.prompt(sessionId, "count");
  const usage = agent.updatesFor(sessionId).filter((u) => u.sessionUpdate === "usage_update");
  assert.equal(usage.length, 2, "one per model round");
  assert.equal(usage[0].used, 3_500_000);
  assert.equal(usage[0].size, 4_000_000);
  assert.deepEqual(usage[0].cost, { amount: 3.02, currency: "CNY" });
  // 3.02 + (0.02·1000 + 2·100)/1e6 = 3.02022
  assert.equal(usage[1].cost.amount.toFixed(2), "3.02");
  assert.equal(usage[1].used, 1_100);

  const s = await agent.rpc.request(status, { sessionId });
  assert.equal(s.schemaVersion, 1);
  assert.equal(s.state, "idle");
  const cum = s.usage.cumulative;
  assert.equal(cum.cacheHitTokens, 1_001_000);
  assert.equal(cum.costQuote.selected.currency, "CNY");
  assert.equal(cum.costQuote.selected.amount.toFixed(2), "3.02");
  for (const field of [
    "originalTotals",
    "valuations",
    "costComplete",
    "displayComplete",
    "displayStatus",
    "billingMode",
    "aggregateMode",
    "rateBand",
    "ratedAt",
  ]) {
    assert.ok(field in cum.costQuote, field);
  }
  assert.equal(cum.estimatedCost.toFixed(2), "3.02");
  assert.equal(cum.currency, "CNY");
  assert.ok(agent.messages.some((m) => m.method === "_reasonix.io/session/status_update" && m.params.event === "usage"));
});

test("a token budget stops a looping turn with a warning and end_turn, recorded as paused", async (t) => {
  const { agent, model, workdir } = await world(t, { env: { REASONIX_BUDGET_TOKENS: "1000" } });
  const { status } = await discover(agent);
  const { sessionId } = await agent.newSession(workdir);
  model.respond = () => ({ toolCalls: [{ name: "list_directory", arguments: {} }], usage: { prompt_tokens: 400, completion_tokens: 50 } });
  const r = await within(20_000, "budgeted turn", agent.prompt(sessionId, "loop forever"));
  assert.equal(r.stopReason, "end_turn");
  assert.equal(model.requests.length, 3);
  assert.match(agent.textOf(sessionId), /\[warning\] Token budget reached/);
  const s = await agent.rpc.request(status, { sessionId });
  assert.deepEqual(s.turnOutcome, { kind: "paused", reason: "token_budget" });
  assert.equal(s.phase, "paused");
});
