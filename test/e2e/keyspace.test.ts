/**
 * The store's keyspace (store/keyspace.ts) against what the daemon really writes: a session lives
 * a whole life (prompts, a checkpointed write, a subagent, a background job, a steer, a paused inbox
 * with an idempotent item, a list entry, a fork), and every key in the store must be of a declared
 * kind; then session/delete must leave no key naming it. The daemon is made here, in this process,
 * so the test can read its store while it runs (a running job's record exists only then); the
 * window is a real shim that finds it on its socket.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { createDaemon, type Daemon } from "../../daemon/main.js";
import { isDeclared, KINDS, keyspace, kindOf, sessionOfKey } from "../../daemon/store/keyspace.js";
import { Store } from "../../daemon/store/store.js";
import { resolvePaths } from "../../shared/paths.js";
import { agentEnv, stopDaemon } from "../support/harness.js";
import { processTest, world, within } from "./fixture.js";

processTest(
  "a session's whole life writes only keys of declared kinds, one of every kind a session owns; session/delete leaves no key naming it",
  async (t) => {
    let daemon: Daemon | undefined;
    const { agent, model, workdir } = await world(t, {
      connector: "process",
      prepare: async (home, model) => {
        const env = agentEnv({ home, model });
        daemon = await createDaemon({ paths: resolvePaths(env), env });
        // Registered before the world's own teardown, which removes the home: the daemon closes first.
        t.after(() => daemon?.close("test over"));
      },
    });
    const store = daemon!.state.store;
    writeFileSync(join(workdir, "a.txt"), "before\n");
    await agent.initialize();
    const { sessionId } = await agent.newSession(workdir);

    model.enqueue(
      { toolCalls: [{ id: "w", name: "write_file", arguments: { path: "a.txt", content: "after\n" } }] },
      { toolCalls: [{ id: "t", name: "task", arguments: { prompt: "Say hello." } }] },
      { content: ["hello"] },
      { toolCalls: [{ id: "bg", name: "run_command", arguments: { command: "exec sleep 30", background: true } }] },
      { content: ["written, asked, started"] },
    );
    assert.equal((await within(20_000, "the first turn", agent.prompt(sessionId, "write, ask, start"))).stopReason, "end_turn");

    model.enqueue(
      { content: ["Looking ", "around."], toolCalls: [{ id: "ls", name: "list_directory", arguments: {} }], chunkDelayMs: 150 },
      { content: ["steered"] },
    );
    const turn = agent.prompt(sessionId, "look around");
    await agent.waitForUpdate((u) => u.update.sessionUpdate === "agent_message_chunk" && u.update.content.text === "Looking ");
    const steered = await agent.rpc.request("_reasonix.io/session/steer", { sessionId, prompt: [{ type: "text", text: "this way" }] });
    assert.equal(steered.disposition, "steer_accepted");
    assert.equal((await within(20_000, "the steered turn", turn)).stopReason, "end_turn");

    // A paused inbox keeps its item; the receipt's key starts past U+00FF, where ranges once ended.
    await agent.rpc.request("_reasonix.io/session/inbox/setPaused", { sessionId, paused: true });
    await agent.rpc.request("_reasonix.io/session/inbox/enqueue", { sessionId, text: "later", idempotencyKey: "键-1" });
    const forked = await agent.rpc.request("session/fork", { sessionId, cwd: workdir, mcpServers: [] });

    const during = await store.keysOf("");
    assert.deepEqual(
      during.filter((k) => !isDeclared(k)),
      [],
      "every key the daemon wrote is of a kind declared in store/keyspace.ts",
    );
    const owned = KINDS.filter((k) => k.session !== "none" && k !== keyspace.removal).map((k) => k.name);
    const kindsOf = (keys: string[], id: string) => [...new Set(keys.filter((k) => sessionOfKey(k) === id).map((k) => kindOf(k)!.name))].sort();
    assert.deepEqual(kindsOf(during, sessionId), owned.sort(), "the session has a key of every kind a session owns");
    assert.ok(during.includes(keyspace.listVersion.key()));

    await agent.rpc.request("session/delete", { sessionId });
    const after = await store.keysOf("");
    assert.deepEqual(
      after.filter((k) => k.includes(sessionId)),
      [],
      "nothing of the deleted session is left",
    );
    assert.deepEqual(
      after.filter((k) => !isDeclared(k)),
      [],
    );
    assert.deepEqual(kindsOf(after, forked.sessionId), ["event", "history", "list", "listByCwd", "session"], "the fork keeps its own");
    const listed = await agent.rpc.request("session/list", { cwd: workdir });
    assert.deepEqual(
      listed.sessions.map((s: { sessionId: string }) => s.sessionId),
      [forked.sessionId],
    );
  },
);

test("a delete cut short by a daemon that died is finished by the next one before it serves: the session is unknown, nothing of it is left", async (t) => {
  const { agent, workdir, home, spawn } = await world(t);
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  assert.equal((await agent.prompt(sessionId, "hello")).stopReason, "end_turn");
  await agent.closeStdin();
  await stopDaemon(home.dir);

  // What store/removal.ts's first batch leaves when the daemon dies right after it.
  let store = await Store.open(join(home.dir, "db"));
  const held = (await store.keysOf("")).filter((k) => sessionOfKey(k) === sessionId);
  assert.ok(held.some((k) => k.startsWith(keyspace.event.prefix)) && held.some((k) => k.startsWith(keyspace.list.prefix)));
  const firstBatch = held.filter((k) => kindOf(k)!.session === "key" || kindOf(k)!.session === "within");
  await store.batch(
    [
      { type: "put", key: keyspace.removal.key(sessionId), value: { at: new Date().toISOString() } },
      ...firstBatch.map((key) => ({ type: "del" as const, key })),
    ],
    true,
  );
  await store.close();

  const next = spawn();
  await next.initialize();
  const load = await next.rawRequest({ id: "load", method: "session/load", params: { sessionId, cwd: workdir, mcpServers: [] } });
  assert.equal(load.error?.code, -32002, "unknown, not a session whose record the store lost");
  await next.closeStdin();
  await stopDaemon(home.dir);
  store = await Store.open(join(home.dir, "db"));
  t.after(() => store.close());
  assert.deepEqual(
    (await store.keysOf("")).filter((k) => k.includes(sessionId)),
    [],
  );
});
