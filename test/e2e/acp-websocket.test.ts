/**
 * `/acp` on the loopback TCP listener as a plain ACP endpoint (DESIGN §3; the remote-transport RFD's
 * WebSocket profile): a client that is not the shim — JSON-RPC in text frames, a bearer token, none
 * of the shim's `x-reasonix-*` headers — is served, and one without the token never gets an ACP byte.
 * The client is the `ws` package used directly, as anyone's client would.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import WebSocket from "ws";
import { TEST_API_KEY } from "../support/harness.js";
import { world, within } from "./fixture.js";

interface Message {
  id?: number | string;
  method?: string;
  params?: any;
  result?: any;
  error?: { code: number; message: string };
}

/** A bare JSON-RPC client over one WebSocket; answers permission questions with the first allow option. */
class PlainClient {
  readonly received: Message[] = [];
  private nextId = 1;
  private readonly waiting = new Map<number, (m: Message) => void>();

  private constructor(private readonly ws: WebSocket) {
    ws.on("error", () => undefined);
    ws.on("message", (data, isBinary) => {
      assert.equal(isBinary, false, "the agent sends text frames only");
      const msg = JSON.parse(data.toString()) as Message;
      this.received.push(msg);
      if (msg.method === "session/request_permission" && msg.id !== undefined) {
        const option = msg.params.options.find((o: { kind: string }) => o.kind === "allow_once");
        this.send({ jsonrpc: "2.0", id: msg.id, result: { outcome: { outcome: "selected", optionId: option.optionId } } });
      } else if (msg.method === undefined && typeof msg.id === "number") {
        this.waiting.get(msg.id)?.(msg);
        this.waiting.delete(msg.id);
      }
    });
  }

  static open(url: string, headers: Record<string, string>): Promise<PlainClient> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, { headers });
      ws.once("open", () => resolve(new PlainClient(ws)));
      ws.once("unexpected-response", (_req, res) => reject(Object.assign(new Error(`HTTP ${res.statusCode}`), { status: res.statusCode })));
      ws.once("error", reject);
    });
  }

  /** The upgrade's answer code when the agent refuses it. */
  static async refusal(url: string, headers: Record<string, string>): Promise<number> {
    try {
      const c = await PlainClient.open(url, headers);
      c.close();
      return 101;
    } catch (err) {
      return (err as { status?: number }).status ?? 0;
    }
  }

  request(method: string, params: unknown): Promise<Message> {
    const id = this.nextId++;
    const answer = new Promise<Message>((resolve) => this.waiting.set(id, resolve));
    this.send({ jsonrpc: "2.0", id, method, params });
    return within(20_000, method, answer);
  }

  send(msg: object): void {
    this.ws.send(JSON.stringify(msg));
  }

  close(): void {
    this.ws.close();
  }
}

test("a plain ACP WebSocket client with the token runs initialize, session/new and a prompt on the TCP listener", async (t) => {
  const { agent, model, home, workdir } = await world(t, {
    prepare: (dir) => {
      writeFileSync(join(dir, "config.json"), JSON.stringify({ listen: "127.0.0.1:0" }));
      // A plain client sends no environment, and a daemon a shim starts holds no key of its own:
      // the key is where `reasonix setup` stores it.
      writeFileSync(join(dir, "credentials.json"), JSON.stringify({ DEEPSEEK_API_KEY: TEST_API_KEY }), { mode: 0o600 });
    },
  });
  // The first window starts the daemon.
  await agent.initialize();
  const address = JSON.parse(readFileSync(join(home.dir, "run", "daemon.json"), "utf8")).tcp as string;
  const token = readFileSync(join(home.dir, "token"), "utf8").trim();
  const url = `ws://${address}/acp`;

  // No token, a wrong one: refused at the upgrade, before any ACP byte.
  assert.equal(await PlainClient.refusal(url, {}), 401);
  assert.equal(await PlainClient.refusal(url, { authorization: "Bearer wrong" }), 401);
  assert.equal(await PlainClient.refusal(url, { authorization: `Bearer ${token}x` }), 401);

  const client = await PlainClient.open(url, { authorization: `Bearer ${token}` });
  t.after(() => client.close());
  const init = await client.request("initialize", { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: "plain", version: "1" } });
  assert.equal(init.result.protocolVersion, 1);
  assert.equal(init.result.agentCapabilities.loadSession, true);

  const created = await client.request("session/new", { cwd: workdir, mcpServers: [] });
  const sessionId = created.result.sessionId as string;
  assert.match(sessionId, /^[0-9a-f-]{36}$/);

  // A command the model runs, asked about and allowed by this client, then the answer.
  model.enqueue({ toolCalls: [{ id: "env", name: "run_command", arguments: { command: "env; echo done-listing" } }] }, { content: ["All ", "done."] });
  const prompted = await client.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "what does a command see?" }] });
  assert.equal(prompted.result.stopReason, "end_turn");
  const asked = client.received.filter((m) => m.method === "session/request_permission");
  assert.equal(asked.length, 1, "the permission question reached the plain client");
  const text = client.received
    .filter((m) => m.method === "session/update" && m.params.sessionId === sessionId && m.params.update.sessionUpdate === "agent_message_chunk")
    .map((m) => m.params.update.content.text)
    .join("");
  assert.match(text, /All done\./);

  // A window without an environment: its session's commands get where programs are and the locale,
  // never the rest of the daemon's (which, in this test process, holds the provider key and REASONIX_HOME).
  const toolResult = model.requests[1]!.body.messages.find((m: { role: string; tool_call_id?: string }) => m.role === "tool" && m.tool_call_id === "env");
  assert.match(toolResult.content, /done-listing/);
  // The rest is what the shell and the sandbox set themselves (PWD; TMPDIR=/tmp when sandboxed).
  const names = [...(toolResult.content as string).matchAll(/^([A-Za-z_][A-Za-z0-9_]*)=/gm)].map((m) => m[1]!);
  assert.ok(names.includes("PWD") && names.includes("PATH"), toolResult.content);
  assert.deepEqual(
    names.filter(
      (n) =>
        !["PWD", "OLDPWD", "SHLVL", "TMPDIR", "_", "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TZ"].includes(n) && !n.startsWith("LC_"),
    ),
    [],
    toolResult.content,
  );
  assert.ok(!toolResult.content.includes(TEST_API_KEY));

  // The session is an ordinary one: the shim's windows list and load it.
  const listed = await agent.rpc.request("session/list", { cwd: workdir });
  assert.ok(listed.sessions.some((s: { sessionId: string }) => s.sessionId === sessionId));
});
