/**
 * Sessions for unit tests: a real `SessionManager` over a real LevelDB in a temporary folder, with
 * the daemon's default configuration and a model that answers from a script in memory (no HTTP).
 * `window()` is an editor window as sessions see it: it records what it was sent and answers
 * requests with what the test says. Nothing of the project is mocked; only the model and the
 * editor, which are the outside world, are stand-ins.
 */
import { SearchThreads } from "../../daemon/tools/builtin/search-thread.js";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import { resolveConfig, type DaemonConfig } from "../../daemon/config/config.js";
import { createLogger } from "../../daemon/log/log.js";
import type { ChatModel, Delta, RoundRequest, RoundResult } from "../../daemon/provider/types.js";
import { type ClientCaps, type ClientPort, SessionManager, type SessionDeps } from "../../daemon/sessions/index.js";
import { Store } from "../../daemon/store/store.js";
import { EditorSilence } from "../../daemon/tools/editor-silence.js";

/** One scripted round: its text, and the tool calls it asks for. */
export interface ScriptedRound {
  text?: string;
  toolCalls?: Array<{ id: string; name: string; arguments: string }>;
}

/** A model that answers each round from `rounds` (then "done."), and keeps every request it got. */
export class MemoryModel implements ChatModel {
  readonly ref = "deepseek/deepseek-v4-flash";
  readonly model = "deepseek-v4-flash";
  readonly requests: RoundRequest[] = [];
  constructor(readonly rounds: ScriptedRound[] = []) {}

  async stream(req: RoundRequest, _signal: AbortSignal, onDelta: (d: Delta) => void): Promise<RoundResult> {
    this.requests.push(structuredClone(req));
    const round = this.rounds.shift() ?? { text: "done." };
    if (round.text) onDelta({ kind: "text", text: round.text });
    const usage = { promptTokens: 100, completionTokens: 10, cacheHitTokens: 0, cacheMissTokens: 100, reasoningTokens: 0 };
    return { content: round.text ?? "", reasoning: "", toolCalls: round.toolCalls ?? [], finishReason: "stop", usage };
  }
}

export interface TestSessions {
  dir: string;
  store: Store;
  manager: SessionManager;
  deps: SessionDeps;
  model: MemoryModel;
  config: DaemonConfig;
  close(): Promise<void>;
}

/** A manager over a fresh store; `close()` shuts it down and removes the folder. */
export async function testSessions(opts: { config?: Partial<DaemonConfig>; rounds?: ScriptedRound[] } = {}): Promise<TestSessions> {
  const dir = mkdtempSync(join(tmpdir(), "rx-sessions-"));
  const log = createLogger(undefined, "silent");
  const store = await Store.open(join(dir, "db"), log);
  const config: DaemonConfig = { ...resolveConfig({}, {}), ...opts.config };
  const model = new MemoryModel(opts.rounds);
  let manager!: SessionManager;
  const deps: SessionDeps = {
    store,
    log,
    config: () => config,
    configDir: join(dir, "config"),
    maxSteps: () => config.maxSteps,
    permissionTimeoutMs: () => config.permissionTimeoutSeconds * 1000,
    goalBounds: () => config.goal,
    createModel: () => model,
    listSessions: async (cwd) => (await manager.list(cwd, undefined)).sessions,
    sandbox: async () => ({ available: false, kind: "none", reason: "not probed in unit tests" }),
    sandboxTmp: join(dir, "sandbox-tmp"),
    hiddenDirs: [],
    tools: {
      editorTimeoutMs: () => config.editorTimeoutSeconds * 1000,
      searches: new SearchThreads(() => config.searchTimeoutSeconds * 1000),
    },
  };
  manager = new SessionManager(store, deps, log);
  return {
    dir,
    store,
    manager,
    deps,
    model,
    config,
    close: async () => {
      await manager.shutdown();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** An editor window as a session sees it: what it was sent, and requests answered by `answer`. */
export class TestWindow implements ClientPort {
  readonly connectionId: string;
  capabilities: ClientCaps = {
    readTextFile: false,
    writeTextFile: false,
    terminal: false,
    extensionSurface: false,
    vendor: true,
    elicitationForm: false,
    elicitationUrl: false,
    mcpInteraction: false,
  };
  lastActive = 0;
  closed = false;
  readonly silence = new EditorSilence(() => undefined);
  readonly updates: SessionUpdate[] = [];
  readonly notifications: Array<{ method: string; params: unknown }> = [];
  readonly requests: Array<{ method: string; params: unknown }> = [];

  constructor(
    name: string,
    readonly env: Record<string, string | undefined> = { PATH: "/usr/bin" },
    readonly umask?: number,
    private readonly answer: (method: string, params: unknown) => unknown = () => ({ outcome: { outcome: "cancelled" } }),
  ) {
    this.connectionId = name;
  }

  sendUpdate(_sessionId: string, update: SessionUpdate): void {
    this.updates.push(update);
  }

  sendEncodedUpdates(_sessionId: string, updates: readonly string[]): void {
    for (const update of updates) this.updates.push(JSON.parse(update) as SessionUpdate);
  }

  notify(method: string, params: unknown): void {
    this.notifications.push({ method, params });
  }

  backlog(): number {
    return 0;
  }

  async request(method: string, params: unknown): Promise<unknown> {
    this.requests.push({ method, params });
    return this.answer(method, params);
  }

  /** The text of the agent message chunks it was sent, joined. */
  agentText(): string {
    return this.updates
      .filter((u): u is Extract<SessionUpdate, { sessionUpdate: "agent_message_chunk" }> => u.sessionUpdate === "agent_message_chunk")
      .map((u) => (u.content.type === "text" ? u.content.text : ""))
      .join("");
  }
}
