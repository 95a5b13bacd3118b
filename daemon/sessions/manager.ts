/**
 * Owns every session of the daemon: live ones in memory, the rest in the store. Connections find
 * sessions here; nothing here knows about connections beyond the ClientPort interface.
 */
import { randomUUID } from "node:crypto";
import { RpcError } from "../../shared/jsonrpc.js";
import type { Logger } from "../log/log.js";
import { keys, StoreDamagedError, type Store } from "../store/store.js";
import { removeSession } from "../store/removal.js";
import { Session } from "./session.js";
import type { SessionDeps } from "./deps.js";
import { Inbox } from "../inbox/inbox.js";
import { isIdle, newSessionRecord, type ClientPort, type SessionRecord } from "./types.js";
import { storedConversation } from "./session-state.js";
import { filterEnvironment } from "./environment.js";
import { firstListings, listPrefix, storedIndexKeys, type ListEntry, type Listing } from "../records/list-index.js";
import { buildSystemPrompt } from "../agent/instructions.js";
import { HeldSinceStart, recoverAtStart, recoverInterrupted, type RecoveryHost } from "./recovery.js";
import { noSandboxNotice } from "../tools/sandbox-probe.js";
import { pruneSessions, RetentionSweeper, type PruneFilter, type PruneHost, type PruneResult } from "./retention.js";
import { DETACHED_CANCEL_NOTICE } from "../agent/window-hold.js";
import { pruneHostOf } from "./in-use.js";
import { forkConversation, forkRecord, sameFolders } from "./fork.js";

export interface NewSessionInput {
  cwd: string;
  additionalDirectories: string[];
  model: string;
  env: Record<string, string | undefined>;
  /** The creating window's umask; undefined when it did not say. */
  umask?: number | undefined;
}

export interface ForkInput extends Omit<NewSessionInput, "model"> {
  /** The message the fork ends with; undefined: everything the parent has committed. */
  messageId: string | undefined;
}

export interface ListPage {
  sessions: ListEntry[];
  nextCursor?: string;
}

const PAGE_SIZE = 50;

/** The live sessions the index does not hold yet, in `cwd` (any when undefined), after the cursor. */
function* unindexedListings(live: Iterable<Session>, cwd: string | undefined, after: string): Iterable<Listing> {
  for (const s of live) {
    const l = s.unindexedListing();
    if (l !== undefined && (cwd === undefined || l.entry.cwd === cwd) && l.sortKey > after) yield l;
  }
}

export class SessionManager {
  private readonly live = new Map<string, Session>();
  private readonly loading = new Map<string, Promise<Session>>();
  private readonly held = new HeldSinceStart();
  /** Forks whose record is not written yet (isBeingMade). */
  private readonly making = new Set<string>();
  /** Sessions taken out of memory whose MCP servers are still ending. */
  private readonly stopping = new Set<Promise<void>>();
  /** When each unattached, idle session was first seen so; it leaves memory after the configured time. */
  private readonly idleSince = new Map<string, number>();
  private sweeper: NodeJS.Timeout | undefined;
  /** Sessions session/delete (or a prune) is removing: a load meanwhile finds none. */
  private readonly deleting = new Set<string>();
  private readonly pruneHost: PruneHost;
  private readonly retention: RetentionSweeper;
  /** Sessions unloaded for idleness since the daemon started (for /status). */
  unloadedIdle = 0;

  constructor(
    private readonly store: Store,
    private readonly deps: SessionDeps,
    private readonly log: Logger,
  ) {
    this.pruneHost = pruneHostOf({
      store,
      live: (id) => this.live.get(id),
      loading: (id) => this.loading.has(id),
      deleting: (id) => this.deleting.has(id),
      delete: (id) => this.delete(id),
    });
    this.retention = new RetentionSweeper(this.pruneHost, () => deps.config().retention, log.child({ component: "retention" }));
    // A disk that filled up has room again: sessions whose writes failed put that in their ledgers.
    store.onRecovered(() => {
      for (const session of this.live.values()) {
        session.repairAfterStoreFault().catch((err: unknown) => this.log.error({ sessionId: session.id, err }, "repair after a store failure failed"));
      }
    });
  }

  /** What a daemon that died left, put right before serving (recovery.ts); nothing that reads every session. */
  recover(): Promise<void> {
    return recoverAtStart(this.recoveryHost());
  }

  /** Turns stored as running, marked interrupted: every record is read, so only once serving, paced by `between`. */
  recoverInterrupted(between: () => Promise<boolean>, page?: number): Promise<number> {
    return recoverInterrupted(this.recoveryHost(), between, page).finally(() => this.held.end());
  }

  private recoveryHost(): RecoveryHost {
    return { store: this.store, log: this.log, get: (id) => this.get(id), ours: (id) => this.live.has(id) || this.loading.has(id) || this.held.has(id) };
  }

  private hold(id: string, session: Session): void {
    this.live.set(id, session);
    this.held.note(id);
  }

  liveSessions(): Session[] {
    return [...this.live.values()];
  }

  /**
   * A new session, returned once its record is synced. `setUp` (session/new: the window attaching,
   * its MCP servers, its commands) runs while the record is being written, not after: the disk's
   * wait and the set-up's reads overlap. A record that cannot be written undoes the set-up (the
   * session is stopped and forgotten); a set-up that fails leaves the session as a failed open does.
   */
  async create(input: NewSessionInput, setUp?: (session: Session) => Promise<void>): Promise<Session> {
    const record = newSessionRecord({
      id: randomUUID(),
      cwd: input.cwd,
      additionalDirectories: input.additionalDirectories,
      model: input.model,
      environment: filterEnvironment(input.env, this.deps.config().shellEnvironment),
      ...(input.umask !== undefined ? { umask: input.umask } : {}),
    });
    const prompt = await buildSystemPrompt(record, this.deps.configDir);
    const start = { prompt, providerEnv: input.env, notices: await this.sandboxNotices() };
    const session = new Session(record, [], this.deps, Inbox.empty(this.store, record.id), start);
    this.hold(record.id, session);
    const [committed, setUpDone] = await Promise.allSettled([session.commit(), setUp?.(session)]);
    if (committed.status === "rejected") {
      this.live.delete(record.id);
      if (setUp) await session.stop().catch(() => undefined);
      throw committed.reason;
    }
    if (setUpDone.status === "rejected") throw setUpDone.reason;
    return session;
  }

  /**
   * A new session with `parentId`'s conversation (fork.ts). The parent is only read: a running turn
   * goes on, and the fork holds what it had committed (its prompt, not the answer still streaming).
   * Not copied: inbox, background jobs, permission grants, checkpoints (undo in the fork starts
   * from its own first write), usage and costs.
   */
  async fork(parentId: string, input: ForkInput): Promise<Session> {
    const parent = await this.get(parentId);
    // An idle session is committed whole first; a running turn is taken as of its last commit point.
    if (!parent.running) await parent.commit();
    const committed = await this.store.get<SessionRecord>(keys.session(parentId));
    if (!committed) throw RpcError.sessionNotFound(parentId);
    const id = randomUUID();
    this.making.add(id);
    const place = {
      cwd: input.cwd,
      additionalDirectories: input.additionalDirectories,
      environment: filterEnvironment(input.env, this.deps.config().shellEnvironment),
    };
    try {
      const forked = await forkConversation(this.store, committed, id, input.messageId);
      const record = forkRecord(committed, forked, id, place);
      const history = forked.history;
      // Other folders have other instructions and facts: the fork gets a system prompt of its own.
      const built = sameFolders(committed, place) && history.length > 0 ? undefined : await buildSystemPrompt(record, this.deps.configDir);
      if (built && history.length > 0) history[0] = { role: "system", content: built.text };
      await this.store.batch(
        history.map((value, n) => ({ type: "put" as const, key: keys.history(id, n), value })),
        false,
      );
      const start = { prompt: built, providerEnv: input.env, notices: await this.sandboxNotices() };
      const session = new Session(record, history, this.deps, Inbox.empty(this.store, id), start);
      this.hold(id, session);
      await session.commit();
      return session;
    } catch (err) {
      // Nothing of a fork that failed stays: what was written of it goes as a delete takes it.
      this.live.delete(id);
      await removeSession(this.store, id, await storedIndexKeys(this.store, id)).catch(() => undefined);
      throw err;
    } finally {
      this.making.delete(id);
    }
  }

  /**
   * A fork writes its ledger and history before the record that counts them (a crash leaves no
   * record naming missing entries); until that record is written the session is being made, not
   * an orphan, for the integrity scan.
   */
  isBeingMade(id: string): boolean {
    return this.making.has(id);
  }

  /** A live session, or one brought back from the store; unknown ids are -32002. */
  async get(id: string): Promise<Session> {
    if (this.deleting.has(id)) throw RpcError.sessionNotFound(id);
    const live = this.live.get(id);
    if (live) return live;
    const pending = this.loading.get(id);
    if (pending) return pending;
    const load = (async () => {
      const record = await this.store.get<SessionRecord>(keys.session(id)).catch((err: unknown) => {
        throw err instanceof StoreDamagedError ? RpcError.internal(`Session ${id} cannot be loaded: ${err.message}`) : err;
      });
      if (!record) {
        // A ledger without its record is a session the store lost the record of, not an unknown id.
        if ((await this.store.range(keys.eventPrefix(id), { limit: 1 })).length > 0) {
          this.store.noteDamage(keys.session(id), "the session's record is missing; its ledger is still stored", id);
          throw RpcError.internal(`Session ${id} cannot be loaded: the store at ${this.store.dir} is damaged (the session's record is missing)`);
        }
        throw RpcError.sessionNotFound(id);
      }
      const history = await storedConversation(this.store, record);
      // A stored conversation keeps its own system prompt: the prefix cache outlives a daemon restart.
      const built = history.length === 0 ? await buildSystemPrompt(record, this.deps.configDir) : undefined;
      const session = new Session(record, history, this.deps, await Inbox.open(this.store, id), { prompt: built });
      this.hold(id, session);
      // Nothing runs a session that is not live: a turn stored as running was cut short (a daemon
      // that died, or a write that failed before the session closed).
      if (record.status === "running") {
        await session.markInterrupted().then(
          () => this.log.info({ sessionId: id }, "marked interrupted turn"),
          (err: unknown) => this.log.error({ sessionId: id, err }, "could not mark an interrupted turn"),
        );
      }
      return session;
    })();
    this.loading.set(id, load);
    try {
      return await load;
    } finally {
      this.loading.delete(id);
    }
  }

  /** session/cancel: a notification, so an unknown or unloaded session is ignored. */
  cancel(id: string): void {
    this.live.get(id)?.cancel();
  }

  /** The notice a session starts with when commands cannot be sandboxed here. */
  private async sandboxNotices(): Promise<string[]> {
    const sandbox = await this.deps.sandbox();
    return sandbox.available ? [] : [noSandboxNotice(sandbox.reason)];
  }

  /** A live session only: methods that act on a running session use this. */
  requireLive(id: string): Session {
    const s = this.live.get(id);
    if (!s) throw RpcError.sessionNotFound(id);
    return s;
  }

  /**
   * One page, newest first: the store's index (sessions with a title) merged with the live sessions
   * it does not hold yet. The cursor is the sort key of the last entry sent.
   */
  async list(cwd: string | undefined, cursor: string | undefined): Promise<ListPage> {
    let after = "";
    if (cursor) {
      const m = /^k:(\d{13}!.+)$/.exec(Buffer.from(cursor, "base64url").toString("utf8"));
      if (!m) throw RpcError.invalidParams("cursor: not a cursor this agent issued");
      after = m[1]!;
    }
    const prefix = listPrefix(cwd);
    const stored = (await this.store.range<ListEntry>(prefix, { ...(after ? { from: `${prefix}${after}\0` } : {}), limit: PAGE_SIZE + 1 })).map((e) => ({
      sortKey: e.key.slice(prefix.length),
      entry: e.value,
    }));
    const merged = firstListings(stored, unindexedListings(this.live.values(), cwd, after), PAGE_SIZE + 1);
    const page = merged.slice(0, PAGE_SIZE);
    const last = page.at(-1);
    return {
      sessions: page.map((p) => p.entry),
      ...(merged.length > PAGE_SIZE && last ? { nextCursor: Buffer.from(`k:${last.sortKey}`).toString("base64url") } : {}),
    };
  }

  /** Detaches `port`; the last window to leave stops the session (its history stays). */
  async close(id: string, port: ClientPort): Promise<void> {
    const session = this.live.get(id);
    if (!session) {
      if (!(await this.store.get(keys.session(id)))) throw RpcError.sessionNotFound(id);
      return;
    }
    session.detach(port);
    if (session.activity().windows === 0) {
      this.live.delete(id);
      await this.unload(session);
    }
  }

  async delete(id: string): Promise<void> {
    this.deleting.add(id);
    try {
      const session = this.live.get(id);
      if (session) {
        this.live.delete(id);
        await this.unload(session);
      }
      // Every kind of key the keyspace (store/keyspace.ts) says is the session's, in a crash-safe order.
      await removeSession(this.store, id, await storedIndexKeys(this.store, id));
    } finally {
      this.deleting.delete(id);
    }
  }

  /** `reasonix sessions prune`: the sessions `filter` names, removed as delete() does, unless in use. */
  prune(filter: PruneFilter, dryRun: boolean): Promise<PruneResult> {
    return pruneSessions(this.pruneHost, filter, { dryRun, now: Date.now() });
  }

  /** The `retention` config key: applied now, then periodically (sessions/retention.ts). */
  startRetention(): void {
    this.retention.start();
  }

  /** A window went away without closing: it stops receiving, the sessions go on. */
  detachEverywhere(port: ClientPort): void {
    for (const s of [...this.live.values()]) {
      if (!s.detach(port)) continue;
      const alone = s.activity().windows === 0;
      // Gone without session/cancel (a killed process is how many clients stop): see agent/window-hold.ts.
      if (alone && s.running && this.deps.config().detachedTurns === "cancel") {
        s.emit(DETACHED_CANCEL_NOTICE);
        s.cancel();
      }
      // A session nobody ever prompted has nothing to run or show once its last window is gone:
      // it leaves memory (it still loads by id), so windows that open sessions in bulk cost nothing after.
      if (alone && s.record.title === undefined && isIdle(s.activity())) {
        this.live.delete(s.id);
        this.unload(s).catch((err: unknown) => this.log.warn({ sessionId: s.id, err }, "unloading an unused session failed"));
      }
    }
  }

  /**
   * Live sessions nobody uses leave memory after `sessionUnloadSeconds`: no window attached, no turn
   * running or waiting, no question pending, nothing queued. They load again on demand.
   */
  startIdleUnload(): void {
    const seconds = this.deps.config().sessionUnloadSeconds;
    if (seconds <= 0 || this.sweeper) return;
    const sweep = (): void => {
      const limit = this.deps.config().sessionUnloadSeconds * 1000;
      const now = Date.now();
      // Deleting the entry being visited does not disturb a Map's iteration.
      for (const s of this.live.values()) {
        // An attached session stays: asked first and cheaply, as most live sessions are attached and
        // building activity() for each cost 3–10 µs (10,000 sessions: a 35–95 ms pause every 30 s;
        // now 16–28 ms, the visit itself).
        const a = s.windowCount > 0 ? undefined : s.activity();
        if (!a || !isIdle(a) || a.queued > 0) {
          if (this.idleSince.size > 0) this.idleSince.delete(s.id);
          continue;
        }
        const since = this.idleSince.get(s.id) ?? now;
        this.idleSince.set(s.id, since);
        if (limit > 0 && now - since >= limit) {
          this.idleSince.delete(s.id);
          this.live.delete(s.id);
          this.unloadedIdle++;
          this.log.info({ sessionId: s.id }, "unloaded an idle session");
          this.unload(s).catch((err: unknown) => this.log.warn({ sessionId: s.id, err }, "unloading an idle session failed"));
        }
      }
    };
    this.sweeper = setInterval(sweep, Math.max(200, Math.min(30_000, (seconds * 1000) / 4)));
    this.sweeper.unref();
  }

  /** Stops a session taken out of memory; its MCP servers' ending is tracked until done. */
  private async unload(session: Session): Promise<void> {
    const closing = (await session.stop()).closing.catch(() => undefined);
    this.stopping.add(closing);
    void closing.then(() => this.stopping.delete(closing));
  }

  /** The daemon stops: every session saved, every MCP server of every session ended. */
  async shutdown(): Promise<void> {
    if (this.sweeper) clearInterval(this.sweeper);
    await this.retention.stop();
    // Saved, MCP servers ended, background jobs too: none outlives the daemon.
    await Promise.all([...this.live.values()].map((s) => s.shutdown()));
    await Promise.all([...this.stopping]);
    this.deps.tools.searches.close();
  }
}
