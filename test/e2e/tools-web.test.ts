import type { TestContext } from "node:test";
import assert from "node:assert/strict";
import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { world, test, processTest } from "./fixture.js";
import { watchChunks } from "../support/stream-gaps.js";
import type { ScriptedModel } from "../support/scripted-model.js";

const PAGE = `<!doctype html><html><head><title>Widget docs</title><style>body{color:red}</style><script>track()</script></head>
<body><h1>Widgets</h1><p>A widget has <strong>three</strong> parts; see <a href="/parts">the parts list</a>.</p>
<ul><li>gear</li><li>spring</li></ul><pre><code>widget.spin(3)</code></pre></body></html>`;

/** A small site on loopback: a page, a same-host redirect to it, and a redirect to another host name. */
async function site(t: TestContext): Promise<{ base: string; port: number; hits: string[] }> {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(req.url ?? "");
    if (req.url === "/old") return void res.writeHead(301, { location: "/docs" }).end();
    if (req.url === "/away") return void res.writeHead(302, { location: `http://localhost:${port}/docs` }).end();
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(PAGE);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { base: `http://127.0.0.1:${port}`, port, hits };
}

function toolResults(model: ScriptedModel): string[] {
  return model.requests
    .at(-1)!
    .body.messages.filter((m: { role: string }) => m.role === "tool")
    .map((m: { content: string }) => m.content);
}

test("web_fetch with private addresses allowed: one question per host, Markdown back, same-host redirects followed, others not", async (t) => {
  const { base, hits } = await site(t);
  const { agent, model, workdir } = await world(t, {
    prepare: (home) => writeFileSync(join(home, "config.json"), JSON.stringify({ webFetch: { allowPrivateNetwork: true } })),
  });
  model.enqueue(
    { toolCalls: [{ name: "web_fetch", arguments: { url: `${base}/docs` } }] },
    { toolCalls: [{ name: "web_fetch", arguments: { url: `${base}/old` } }] },
    { toolCalls: [{ name: "web_fetch", arguments: { url: `${base}/away` } }] },
    { content: ["read it"] },
  );
  const questions: any[] = [];
  agent.onPermission = (p) => {
    questions.push(p);
    return { outcome: { outcome: "selected", optionId: "allow_always" } };
  };
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  await agent.prompt(sessionId, "read the widget docs");

  const host = base.slice("http://".length);
  assert.equal(questions.length, 1, "asked once for the host");
  assert.equal(questions[0].toolCall.kind, "fetch");
  assert.ok(
    questions[0].options.some(
      (o: { kind: string; name: string }) => o.kind === "allow_always" && o.name === `Always allow web_fetch from ${host} in this session`,
    ),
  );
  const [page, redirected, away] = toolResults(model);
  assert.equal(
    page,
    `URL: ${base}/docs\nTitle: Widget docs\n\n# Widgets\n\nA widget has **three** parts; see [the parts list](${base}/parts).\n\n-   gear\n-   spring\n\n\`\`\`\nwidget.spin(3)\n\`\`\``,
  );
  assert.ok(!page!.includes("track()") && !page!.includes("color:red"), "no script or style");
  assert.match(redirected!, new RegExp(`^URL: ${base}/docs\n`), "the same-host redirect was followed");
  assert.match(away!, /redirects \(302\) to http:\/\/localhost:\d+\/docs, on another host; it was not followed/);
  assert.deepEqual(hits, ["/docs", "/old", "/docs", "/away"]);
});

test("web_fetch without the allowance refuses loopback, by address and by name after resolving it, saying why; non-HTTP URLs too", async (t) => {
  const { base, port, hits } = await site(t);
  const { agent, model, workdir } = await world(t);
  model.enqueue(
    { toolCalls: [{ name: "web_fetch", arguments: { url: `${base}/docs` } }] },
    { toolCalls: [{ name: "web_fetch", arguments: { url: `http://localhost:${port}/docs` } }] },
    { toolCalls: [{ name: "web_fetch", arguments: { url: "file:///etc/passwd" } }] },
    { content: ["refused"] },
  );
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  await agent.prompt(sessionId, "read the widget docs");
  const [literal, named, file] = toolResults(model);
  const why = /loopback or private-network address; web_fetch does not reach those unless config\.json has "webFetch": \{"allowPrivateNetwork": true\}/;
  assert.match(literal!, /^Refused: 127\.0\.0\.1 resolves to 127\.0\.0\.1/);
  assert.match(literal!, why);
  assert.match(named!, /^Refused: localhost resolves to (127\.0\.0\.1|::1)/);
  assert.match(named!, why);
  assert.equal(file, "Tool error: invalid arguments for web_fetch: url: only http and https URLs can be fetched, not file");
  assert.deepEqual(hits, [], "nothing reached the server");
  const asked = agent.agentRequests.filter((r) => r.method === "session/request_permission").map((r) => r.params.toolCall.title);
  assert.deepEqual(asked, [`Fetch ${base}/docs`, `Fetch http://localhost:${port}/docs`], "no question about the file URL");
});

/** GET over the daemon's Unix socket; resolves with the status and how long the answer took. */
function timedGet(socketPath: string, path: string): Promise<{ status: number; ms: number }> {
  const start = performance.now();
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, path, method: "GET" }, (res) => {
      res.resume();
      res.on("end", () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - start }));
    });
    req.on("error", reject);
    req.end();
  });
}

// Process connector only: the daemon's liveness is watched from outside it (a stall in this process would
// stall the watcher too).
processTest(
  "a fetched page of 300 KB of `<title`: the daemon stays live (/livez, another window's stream) and the page comes back without a title",
  async (t) => {
    const bomb = "<title".repeat(50_000);
    const server = createServer((_req, res) => res.writeHead(200, { "content-type": "text/html" }).end(bomb));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/bomb`;
    const { agent, model, workdir, spawn, home } = await world(t, {
      connector: "process",
      prepare: (dir) => writeFileSync(join(dir, "config.json"), JSON.stringify({ webFetch: { allowPrivateNetwork: true } })),
    });
    const other = spawn();
    await Promise.all([agent.initialize(), other.initialize()]);
    const { sessionId: fetcher } = await agent.newSession(workdir);
    const { sessionId: talker } = await other.newSession(workdir);

    // The talker streams for far longer than the fetch may take; it is cancelled once the fetch is over.
    model.enqueue(
      { content: Array.from({ length: 6000 }, (_, i) => `word${i} `), chunkDelayMs: 5 },
      { toolCalls: [{ id: "fetch-1", name: "web_fetch", arguments: { url } }] },
      { content: ["Nothing there."] },
    );
    const arrivals = watchChunks(other, talker);
    const talking = other.prompt(talker, "talk for a while");
    await other.waitForUpdate((u) => u.sessionId === talker && u.update.sessionUpdate === "agent_message_chunk");

    const fetching = agent.prompt(fetcher, "fetch it");
    const call = await agent.waitForUpdate((u) => u.sessionId === fetcher && u.update.sessionUpdate === "tool_call");
    const started = performance.now();
    const socketPath = join(home.dir, "run", "daemon.sock");
    const livez: number[] = [];
    let polling = true;
    const poller = (async () => {
      while (polling) {
        const got = await timedGet(socketPath, "/livez");
        assert.equal(got.status, 200);
        livez.push(got.ms);
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    const done = await agent.waitForUpdate(
      (u) => u.sessionId === fetcher && u.update.toolCallId === call.update.toolCallId && (u.update.status === "completed" || u.update.status === "failed"),
      120_000,
    );
    const ended = performance.now();
    polling = false;
    await poller;
    assert.equal((await fetching).stopReason, "end_turn");
    const afterFetch = other.updates.length;
    await other.waitForUpdate((u) => u.sessionId === talker && u.update.sessionUpdate === "agent_message_chunk", 10_000, afterFetch);
    await other.cancel(talker);
    assert.equal((await talking).stopReason, "cancelled");

    const longest = arrivals.longestGap(started, ended);
    const slowest = Math.max(...livez);
    t.diagnostic(
      `during the fetch (${(ended - started).toFixed(0)} ms): longest gap in the other window's stream ${longest.toFixed(1)} ms; ` +
        `slowest of ${livez.length} /livez answers ${slowest.toFixed(1)} ms`,
    );
    assert.equal(done.update.status, "completed");
    assert.equal(toolResults(model)[0], `URL: ${url}\n\n`, "no title, and nothing of the page is text");
    assert.ok(longest < 1500, `the other window's stream stalled for ${longest.toFixed(0)} ms`);
    assert.ok(slowest < 1000, `/livez took ${slowest.toFixed(0)} ms to answer`);
  },
);
