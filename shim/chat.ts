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

export async function runChat(args: string[], attachTo?: string): Promise<void> {
  const { values } = parseFlags(
    args,
    { cwd: { type: "string" }, model: { type: "string" }, prompt: { type: "string", short: "p" }, session: { type: "string" } },
    CHAT_USAGE,
  );
  const sessionToAttach = attachTo ?? values.session;
  const cwd = resolve(values.cwd ?? process.cwd());
  const tty = process.stdin.isTTY === true && process.stdout.isTTY === true;
  const out = new Renderer((text) => process.stdout.write(text), tty);

  const ws = await connectOrStart(resolvePaths(), { model: values.model, umask: takeUmask() });
  let lastUsage: Update | undefined;
  let answerPermission: (params: { toolCall?: { title?: string }; options?: PermissionOption[] }) => Promise<unknown> = async () => ({
    outcome: { outcome: "cancelled" },
  });
  const peer = new JsonRpcPeer((t) => ws.send(t), {
    request: (method, params) => {
      if (method === "session/request_permission") return answerPermission(params as { options?: PermissionOption[] });
      throw RpcError.methodNotFound(method);
    },
    notification: (method, params) => {
      if (method !== "session/update") return;
      const update = (params as { update?: Update }).update ?? {};
      if (update.sessionUpdate === "usage_update") lastUsage = update;
      onUpdate(update);
    },
  });
  let onUpdate = (u: Update): void => out.update(u);
  ws.on("message", (text) => peer.receive(text));
  let exitCode: number | undefined;
  const finish = (code: number): never => {
    ws.close();
    process.exit(code);
  };
  ws.on("close", () => {
    if (exitCode === undefined) {
      out.error("The connection to the daemon closed.");
      process.exit(1);
    }
  });

  await peer.request("initialize", { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: "reasonix-chat", version: "0" } });
  let sessionId: string;
  if (sessionToAttach) {
    sessionId = sessionToAttach;
    // The whole history arrives; only the last few turns are shown, then live updates as they come.
    const replay: Update[] = [];
    onUpdate = (u) => replay.push(u);
    await peer.request("session/load", { sessionId, cwd, mcpServers: [] }).catch((err: unknown) => {
      out.error(`Cannot attach to ${sessionId}: ${errorText(err)}`);
      finish(1);
    });
    const starts = replay.flatMap((u, i) => (u.sessionUpdate === "user_message_chunk" ? [i] : []));
    const from = starts.length > RECENT_TURNS ? starts[starts.length - RECENT_TURNS]! : 0;
    if (from > 0) out.info(`… ${starts.length - RECENT_TURNS} earlier turns not shown`);
    onUpdate = (u) => out.update(u);
    for (const u of replay.slice(from)) out.update(u);
    out.info(`attached to session ${sessionId} (${cwd})`);
  } else {
    sessionId = ((await peer.request("session/new", { cwd, mcpServers: [] })) as { sessionId: string }).sessionId;
  }

  let running = false;
  const prompt = async (text: string): Promise<number> => {
    running = true;
    lastUsage = undefined;
    try {
      const { stopReason } = (await peer.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] })) as { stopReason: string };
      out.turnEnded(stopReason, usageLine(lastUsage));
      return exitCodeFor(stopReason);
    } catch (err) {
      if (err instanceof RpcError && err.code === ErrorCode.AuthRequired) {
        out.error(NO_KEY_HELP);
        return 2;
      }
      out.error(`Error: ${errorText(err)}`);
      return 1;
    } finally {
      running = false;
    }
  };

  if (!tty) {
    // Pipe mode: prompts are stdin's lines (or -p); a permission question takes the next line as its answer.
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
    answerPermission = async (params) => {
      const options = params.options ?? [];
      out.lineBreak();
      process.stdout.write(`Permission: ${params.toolCall?.title ?? "a tool call"}\n${options.map((o, i) => `  [${i + 1}] ${o.name}`).join("\n")}\n`);
      const answer = (await nextLine())?.trim() ?? "";
      const chosen = options[Number(answer) - 1] ?? options.find((o) => o.optionId === answer || o.kind === answer);
      process.stdout.write(`  → ${chosen ? chosen.name : "no answer: cancelled"}\n`);
      return chosen ? { outcome: { outcome: "selected", optionId: chosen.optionId } } : { outcome: { outcome: "cancelled" } };
    };
    let code = 0;
    if (values.prompt !== undefined) code = await prompt(values.prompt);
    else {
      for (let line = await nextLine(); line !== undefined; line = await nextLine()) {
        if (!line.trim()) continue;
        code = await prompt(line);
        if (code === 2) break;
      }
    }
    exitCode = code;
    finish(code);
  }

  // A terminal: line editing, Ctrl-C cancels (twice exits), Tab toggles steer/queue during a turn.
  const rl: Interface = createInterface({ input: process.stdin, output: process.stdout, terminal: true, prompt: "› " });
  emitKeypressEvents(process.stdin, rl);
  let queueMode = false;
  let lastInterrupt = 0;
  process.stdin.on("keypress", (_s: string, key: { name?: string } | undefined) => {
    if (key?.name === "tab" && running) {
      queueMode = !queueMode;
      out.info(queueMode ? "typing queues a follow-up (Tab: steer the turn instead)" : "typing steers the running turn (Tab: queue instead)");
    }
  });
  answerPermission = async (params) => {
    const options = params.options ?? [];
    out.lineBreak();
    process.stdout.write(
      `Permission: ${params.toolCall?.title ?? "a tool call"}\n${options.map((o, i) => `  [${i + 1}] ${o.name}`).join("\n")}\npress 1-${options.length}, Esc to cancel\n`,
    );
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
  rl.on("SIGINT", () => {
    const now = Date.now();
    if (now - lastInterrupt < 2000) {
      exitCode = 0;
      out.info("left the session; it stays in the daemon (reasonix attach to come back)");
      finish(0);
    }
    lastInterrupt = now;
    // Whichever window started it, the session's running turn stops (a notification: harmless when idle).
    void peer.notify("session/cancel", { sessionId });
    out.info("cancel sent; Ctrl-C again to leave (the session stays)");
  });
  rl.on("close", () => {
    exitCode = 0;
    finish(0);
  });
  out.info(`session ${sessionId} in ${cwd} — Ctrl-C cancels a turn, twice leaves; typing during a turn steers it`);
  rl.prompt();
  rl.on("line", (line) => {
    const text = line.trim();
    if (!text) return rl.prompt();
    void (async () => {
      const elsewhere = !running && ((await peer.request(STATUS, { sessionId }).catch(() => ({}))) as { state?: string }).state === "running";
      if (running || elsewhere) {
        const method = queueMode ? ENQUEUE : STEER;
        const params = queueMode ? { sessionId, text, intent: "followup" } : { sessionId, prompt: [{ type: "text", text }] };
        const r = (await peer.request(method, params).catch((err: unknown) => ({ error: errorText(err) }))) as { disposition?: string; error?: string };
        out.info(r.error ? `not sent: ${r.error}` : r.disposition === "steer_accepted" ? "steer accepted" : "queued as a follow-up");
        return;
      }
      const code = await prompt(text);
      if (code === 2) finish(2);
      rl.prompt();
    })();
  });
}
