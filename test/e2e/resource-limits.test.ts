/**
 * Inputs and outputs of a size nobody planned for (issue 16, item 5): a 30 MB prompt, a 200,000-line
 * file, a binary file, a command printing 100 MB, an MCP tool answering 10 MB. What the model reads
 * stays bounded and says what was left out; the daemon's heap does not grow with the input.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { McpHttpServer } from "../support/mcp-http-server.js";
import { world } from "./fixture.js";

/**
 * These turns move tens of megabytes through a test process that hosts the daemon too: two suites
 * side by side on 2 cores once took the 30 MB prompt past the usual 30 s bound. A bound, not a timing.
 */
const LARGE = { timeoutMs: 300_000 };

const toolMessage = (model: { requests: Array<{ body: any }> }, id: string): string =>
  model.requests.flatMap((r) => r.body.messages).find((m: { tool_call_id?: string }) => m.tool_call_id === id)?.content;

/** The highest heap use seen while `work` runs, over the heap before it (this process hosts the daemon). */
async function heapGrowth<T>(work: () => Promise<T>): Promise<{ result: T; growthMb: number }> {
  const before = process.memoryUsage().heapUsed;
  let peak = before;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().heapUsed);
  }, 5);
  try {
    const result = await work();
    peak = Math.max(peak, process.memoryUsage().heapUsed);
    return { result, growthMb: (peak - before) / 2 ** 20 };
  } finally {
    clearInterval(timer);
  }
}

test("a 30 MB prompt: the model reads its head and tail with a note saying how much was left out, and the daemon keeps no copy in its heap", async (t) => {
  const { agent, model, workdir } = await world(t);
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  const v8 = await import("node:v8");
  const vm = await import("node:vm");
  v8.setFlagsFromString("--expose-gc");
  const gc = vm.runInNewContext("gc") as () => void;
  gc();
  const base = process.memoryUsage().heapUsed;
  model.enqueue({ content: ["it was cut"] });
  const { result } = await heapGrowth(() => agent.prompt(sessionId, `HEAD ${"x".repeat(30_000_000)} TAIL`, LARGE));
  assert.equal(result.stopReason, "end_turn");
  const sent: string = model.requests[0]!.body.messages.at(-1).content;
  assert.ok(sent.length < 300_000, `the model read ${sent.length} characters`);
  assert.ok(sent.startsWith("HEAD "));
  assert.ok(sent.endsWith(" TAIL"));
  assert.match(
    sent,
    /\[\.\.\. \d+ characters omitted here: the user's message is 30000010 characters; the first \d+ and the last \d+ are shown\. Tell the user it was cut/,
  );
  assert.ok(model.requests[0]!.rawBody.length < 400_000, "the request to the provider stays small");
  // The harness's own record of what it wrote is not the daemon's memory.
  agent.stdinLines.splice(0, agent.stdinLines.length, ...agent.stdinLines.filter((l) => l.length < 1_000_000));
  gc();
  const retainedMb = (process.memoryUsage().heapUsed - base) / 2 ** 20;
  assert.ok(retainedMb < 16, `the daemon kept ${retainedMb.toFixed(1)} MB after a 30 MB prompt`);
  model.enqueue({ content: ["next"] });
  assert.equal((await agent.prompt(sessionId, "and a short one")).stopReason, "end_turn");
});

test("a 200,000-line file: read_file shows a page within its output limit and says how to read on; a binary file is refused by name", async (t) => {
  const { agent, model, workdir } = await world(t);
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  const lines = Array.from({ length: 200_000 }, (_, i) => `line ${i + 1} ${"abcdefghij".repeat(6)}`);
  writeFileSync(join(workdir, "huge.log"), `${lines.join("\n")}\n`);
  writeFileSync(join(workdir, "short-lines.log"), `${Array.from({ length: 200_000 }, (_, i) => String(i + 1)).join("\n")}\n`);
  writeFileSync(join(workdir, "blob.bin"), Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 0, 1, 2, 0, 255, 254]));
  model.enqueue(
    {
      toolCalls: [
        { id: "wide", name: "read_file", arguments: { path: "huge.log" } },
        { id: "narrow", name: "read_file", arguments: { path: "short-lines.log" } },
        { id: "bin", name: "read_file", arguments: { path: "blob.bin" } },
      ],
    },
    { content: ["read"] },
  );
  assert.equal((await agent.prompt(sessionId, "read them", LARGE)).stopReason, "end_turn");
  const wide = toolMessage(model, "wide");
  assert.ok(wide.length <= 128 * 1024, `${wide.length} characters`);
  assert.match(wide, /^ {4}1\tline 1 abc/);
  assert.match(wide, /\[Showing lines 1–(\d+) of 200000 \(the output limit of 98304 characters\)\. Use offset=\d+ to read more\.\]$/);
  const shownUpTo = Number(/Showing lines 1–(\d+)/.exec(wide)![1]);
  assert.ok(shownUpTo > 1000 && shownUpTo < 2000, String(shownUpTo));
  assert.match(wide, new RegExp(`Use offset=${shownUpTo + 1} to`));
  const narrow = toolMessage(model, "narrow");
  assert.match(narrow, /\[Showing lines 1–2000 of 200000\. Use offset=2001 to read more\.\]$/);
  assert.match(toolMessage(model, "bin"), /blob\.bin is a binary file|binary/);
});

test("a command printing 100 MB: the model reads its first and last 16 KiB with the bytes left out counted, and the heap does not hold it", async (t) => {
  const { agent, model, workdir } = await world(t);
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  model.enqueue(
    { toolCalls: [{ id: "big", name: "run_command", arguments: { command: "printf START; head -c 100000000 /dev/zero | tr '\\0' x; printf FINISH" } }] },
    { content: ["that was long"] },
  );
  const { result, growthMb } = await heapGrowth(() => agent.prompt(sessionId, "print a lot", LARGE));
  assert.equal(result.stopReason, "end_turn");
  const out = toolMessage(model, "big");
  assert.ok(out.length < 40_000, `${out.length} characters`);
  assert.match(out, /START/);
  assert.match(out, /FINISH/);
  assert.match(out, /\[\.\.\. 999\d{5} bytes omitted \.\.\.\]/);
  assert.ok(growthMb < 64, `the heap grew ${growthMb.toFixed(1)} MB for 100 MB of output`);
});

test("an MCP tool answering 10 MB: the model and the windows get a bounded result that says it was cut", async (t) => {
  const { agent, model, workdir } = await world(t);
  const server = await McpHttpServer.start();
  t.after(() => server.close());
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir, { mcpServers: [{ type: "http", name: "calc", url: server.url, headers: [] }] });
  model.enqueue({ toolCalls: [{ id: "dump", name: "mcp__calc__dump", arguments: { bytes: 10_000_000 } }] }, { content: ["too much"] });
  const { result, growthMb } = await heapGrowth(() => agent.prompt(sessionId, "dump it", LARGE));
  assert.equal(result.stopReason, "end_turn");
  const out = toolMessage(model, "dump");
  assert.ok(out.length <= 128 * 1024 + 400, `${out.length} characters`);
  assert.ok(out.endsWith("END"));
  assert.match(out, /characters omitted here: the tool's result is 10000000 characters; .* Ask for less/);
  const shown = agent
    .updatesFor(sessionId)
    .filter((u) => u.sessionUpdate === "tool_call_update" && u.status === "completed")
    .at(-1);
  const shownText = JSON.stringify(shown.content);
  assert.ok(shownText.length < 200_000, `the window got ${shownText.length} characters`);
  assert.match(shownText, /characters omitted here/);
  assert.ok(growthMb < 128, `the heap grew ${growthMb.toFixed(1)} MB`);
});
