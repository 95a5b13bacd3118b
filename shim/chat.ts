/**
 * `reasonix chat` and `reasonix attach`: a terminal client of the daemon, a window like an editor's
 * (same connection, permission routing and window rules), built on node's own readline: line
 * editing, history and key events are all it needs, and `reasonix acp` never loads any of it.
 * Without a terminal it reads prompts from stdin and writes plain lines, for scripts.
 */
import { resolve } from "node:path";
import { createInterface, emitKeypressEvents, type Interface } from "node:readline";
import { ErrorCode, JsonRpcPeer, RpcError } from "../shared/jsonrpc.js";
import { parseFlags } from "../shared/cli.js";
import { resolvePaths } from "../shared/paths.js";
import { connectOrStart, takeUmask } from "./connect.js";
import { Renderer, usageLine } from "./chat-render.js";
import { errorText } from "../shared/error-text.js";

export const CHAT_USAGE = `usage: reasonix chat [--cwd DIR] [--model provider/model] [-p PROMPT] [--session ID]
       reasonix attach SESSION
`;

const STEER = "_reasonix.io/session/steer";
const ENQUEUE = "_reasonix.io/session/inbox/enqueue";
const STATUS = "_reasonix.io/session/status";
const RECENT_TURNS = 3;

type Update = Record<string, unknown> & { sessionUpdate?: string };
interface PermissionOption {
  optionId: string;
  name: string;
  kind: string;
}

/** How a turn ended, as an exit status for scripts. */
export function exitCodeFor(stopReason: string): number {
  switch (stopReason) {
    case "end_turn":
      return 0;
    case "cancelled":
      return 130;
    case "refusal":
      return 3;
    default:
      return 4;
  }
}

const NO_KEY_HELP =
  "No model provider key is configured. Set DEEPSEEK_API_KEY (or the apiKeyEnv of your provider in config.json) in this shell, or run `reasonix setup`.";

type PermissionParams = { toolCall?: { title?: string }; options?: PermissionOption[] };
type PermissionAnswer = (params: PermissionParams) => Promise<unknown>;

/** The daemon connection as the terminal client uses it: one window, one session, its turns. */
class ChatConnection {
  /** Where updates go: the renderer, or a replay buffer while attaching. */
  onUpdate: (u: Update) => void;
  /** How a permission question is answered: a line in pipe mode, a key in a terminal. */
  answerPermission: PermissionAnswer = async () => ({ outcome: { outcome: "cancelled" } });
  /** Set once leaving is decided: the socket closing then is no error. */
  exitCode: number | undefined;
  running = false;
  sessionId = "";
  private lastUsage: Update | undefined;

  private constructor(
    private readonly ws: Awaited<ReturnType<typeof connectOrStart>>,
    readonly peer: JsonRpcPeer,
    private readonly out: Renderer,
  ) {
    this.onUpdate = (u) => out.update(u);
  }

  static async open(model: string | undefined, out: Renderer): Promise<ChatConnection> {
    const ws = await connectOrStart(resolvePaths(), { model, umask: takeUmask() });
    let chat!: ChatConnection;
    const peer = new JsonRpcPeer((t) => ws.send(t), {
      request: (method, params) => {
        if (method === "session/request_permission") return chat.answerPermission(params as PermissionParams);
        throw RpcError.methodNotFound(method);
      },
      notification: (method, params) => {
        if (method !== "session/update") return;
        const update = (params as { update?: Update }).update ?? {};
        if (update.sessionUpdate === "usage_update") chat.lastUsage = update;
        chat.onUpdate(update);
      },
    });
    chat = new ChatConnection(ws, peer, out);
    ws.on("message", (text) => peer.receive(text));
    ws.on("close", () => {
      if (chat.exitCode === undefined) {
        out.error("The connection to the daemon closed.");
        process.exit(1);
      }
    });
    await peer.request("initialize", { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: "reasonix-chat", version: "0" } });
    return chat;
  }

  finish(code: number): never {
    this.exitCode = code;
    this.ws.close();
    process.exit(code);
  }

  /** A new session in `cwd`, or `attachTo` loaded: the last few turns shown, then its live updates. */
  async openSession(cwd: string, attachTo: string | undefined): Promise<void> {
    if (!attachTo) {
      this.sessionId = ((await this.peer.request("session/new", { cwd, mcpServers: [] })) as { sessionId: string }).sessionId;
      return;
    }
    this.sessionId = attachTo;
    const replay: Update[] = [];
    this.onUpdate = (u) => replay.push(u);
    await this.peer.request("session/load", { sessionId: attachTo, cwd, mcpServers: [] }).catch((err: unknown) => {
      this.out.error(`Cannot attach to ${attachTo}: ${errorText(err)}`);
      this.finish(1);
    });
    const starts = replay.flatMap((u, i) => (u.sessionUpdate === "user_message_chunk" ? [i] : []));
    const from = starts.length > RECENT_TURNS ? starts[starts.length - RECENT_TURNS]! : 0;
    if (from > 0) this.out.info(`… ${starts.length - RECENT_TURNS} earlier turns not shown`);
    this.onUpdate = (u) => this.out.update(u);
    for (const u of replay.slice(from)) this.out.update(u);
    this.out.info(`attached to session ${attachTo} (${cwd})`);
  }

  /** One turn; its exit status (see exitCodeFor; 2 without a key, 1 on an error). */
  async prompt(text: string): Promise<number> {
    this.running = true;
    this.lastUsage = undefined;
    try {
      const { stopReason } = (await this.peer.request("session/prompt", { sessionId: this.sessionId, prompt: [{ type: "text", text }] })) as {
        stopReason: string;
      };
      this.out.turnEnded(stopReason, usageLine(this.lastUsage));
      return exitCodeFor(stopReason);
    } catch (err) {
      if (err instanceof RpcError && err.code === ErrorCode.AuthRequired) {
        this.out.error(NO_KEY_HELP);
        return 2;
      }
      this.out.error(`Error: ${errorText(err)}`);
      return 1;
    } finally {
      this.running = false;
    }
  }
}

function permissionText(params: PermissionParams): string {
  const options = params.options ?? [];
  return `Permission: ${params.toolCall?.title ?? "a tool call"}\n${options.map((o, i) => `  [${i + 1}] ${o.name}`).join("\n")}\n`;
}

/** Pipe mode: prompts are stdin's lines (or -p); a permission question takes the next line as its answer. */
async function pipeMode(chat: ChatConnection, out: Renderer, promptFlag: string | undefined): Promise<never> {
  const lines: string[] = [];
  let ended = false;
  let wake: (() => void) | undefined;
  const reader = createInterface({ input: process.stdin, terminal: false });
  reader.on("line", (l) => {
    lines.push(l);
    wake?.();
  });
  reader.on("close", () => {
    ended = true;
    wake?.();
  });
  const nextLine = async (): Promise<string | undefined> => {
    while (lines.length === 0 && !ended) await new Promise<void>((r) => (wake = r));
    return lines.shift();
  };
  chat.answerPermission = async (params) => {
    const options = params.options ?? [];
    out.lineBreak();
    process.stdout.write(permissionText(params));
    const answer = (await nextLine())?.trim() ?? "";
    const chosen = options[Number(answer) - 1] ?? options.find((o) => o.optionId === answer || o.kind === answer);
    process.stdout.write(`  → ${chosen ? chosen.name : "no answer: cancelled"}\n`);
    return chosen ? { outcome: { outcome: "selected", optionId: chosen.optionId } } : { outcome: { outcome: "cancelled" } };
  };
  let code = 0;
  if (promptFlag !== undefined) code = await chat.prompt(promptFlag);
  else {
    for (let line = await nextLine(); line !== undefined; line = await nextLine()) {
      if (!line.trim()) continue;
      code = await chat.prompt(line);
      if (code === 2) break;
    }
  }
  return chat.finish(code);
}

/** A permission question in a terminal: one key, 1-9, Esc cancels. */
function keyAnswer(rl: Interface, out: Renderer): PermissionAnswer {
  return async (params) => {
    const options = params.options ?? [];
    out.lineBreak();
    process.stdout.write(`${permissionText(params)}press 1-${options.length}, Esc to cancel\n`);
    const key = await new Promise<string>((resolveKey) => {
      const onKey = (s: string, k: { name?: string } | undefined): void => {
        if (k?.name === "escape" || (s && /^[1-9]$/.test(s) && Number(s) <= options.length)) {
          process.stdin.off("keypress", onKey);
          // The key also reached the line being edited: take it back out.
          rl.write(null, { ctrl: true, name: "u" });
          resolveKey(k?.name === "escape" ? "" : s);
        }
      };
      process.stdin.on("keypress", onKey);
    });
    const chosen = options[Number(key) - 1];
    out.info(chosen ? `→ ${chosen.name}` : "→ cancelled");
    return chosen ? { outcome: { outcome: "selected", optionId: chosen.optionId } } : { outcome: { outcome: "cancelled" } };
  };
}

/** A terminal: line editing, Ctrl-C cancels (twice leaves), Tab toggles steer/queue during a turn. */
function terminalMode(chat: ChatConnection, out: Renderer, cwd: string): void {
  const { sessionId, peer } = chat;
  const rl: Interface = createInterface({ input: process.stdin, output: process.stdout, terminal: true, prompt: "› " });
  emitKeypressEvents(process.stdin, rl);
  let queueMode = false;
  let lastInterrupt = 0;
  process.stdin.on("keypress", (_s: string, key: { name?: string } | undefined) => {
    if (key?.name === "tab" && chat.running) {
      queueMode = !queueMode;
      out.info(queueMode ? "typing queues a follow-up (Tab: steer the turn instead)" : "typing steers the running turn (Tab: queue instead)");
    }
  });
  chat.answerPermission = keyAnswer(rl, out);
  rl.on("SIGINT", () => {
    const now = Date.now();
    if (now - lastInterrupt < 2000) {
      out.info("left the session; it stays in the daemon (reasonix attach to come back)");
      chat.finish(0);
    }
    lastInterrupt = now;
    // Whichever window started it, the session's running turn stops (a notification: harmless when idle).
    void peer.notify("session/cancel", { sessionId });
    out.info("cancel sent; Ctrl-C again to leave (the session stays)");
  });
  rl.on("close", () => chat.finish(0));
  out.info(`session ${sessionId} in ${cwd} — Ctrl-C cancels a turn, twice leaves; typing during a turn steers it`);
  rl.prompt();
  rl.on("line", (line) => {
    const text = line.trim();
    if (!text) return rl.prompt();
    void (async () => {
      const elsewhere = !chat.running && ((await peer.request(STATUS, { sessionId }).catch(() => ({}))) as { state?: string }).state === "running";
      if (chat.running || elsewhere) {
        const method = queueMode ? ENQUEUE : STEER;
        const params = queueMode ? { sessionId, text, intent: "followup" } : { sessionId, prompt: [{ type: "text", text }] };
        const r = (await peer.request(method, params).catch((err: unknown) => ({ error: errorText(err) }))) as { disposition?: string; error?: string };
        out.info(r.error ? `not sent: ${r.error}` : r.disposition === "steer_accepted" ? "steer accepted" : "queued as a follow-up");
        return;
      }
      const code = await chat.prompt(text);
      if (code === 2) chat.finish(2);
      rl.prompt();
    })();
  });
}

export async function runChat(args: string[], attachTo?: string): Promise<void> {
  const { values } = parseFlags(
    args,
    { cwd: { type: "string" }, model: { type: "string" }, prompt: { type: "string", short: "p" }, session: { type: "string" } },
    CHAT_USAGE,
  );
  const cwd = resolve(values.cwd ?? process.cwd());
  const tty = process.stdin.isTTY === true && process.stdout.isTTY === true;
  const out = new Renderer((text) => process.stdout.write(text), tty);
  const chat = await ChatConnection.open(values.model, out);
  await chat.openSession(cwd, attachTo ?? values.session);
  if (!tty) await pipeMode(chat, out, values.prompt);
  else terminalMode(chat, out, cwd);
}
