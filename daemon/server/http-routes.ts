/**
 * Operator endpoints: /livez (the event loop answers), /readyz (store open and writable, not
 * draining; else 503 with the reason), /status (JSON for `reasonix daemon status`), and the
 * shutdown route the CLI uses.
 */
import type { FastifyInstance } from "fastify";
import { WIRE_MAJOR } from "../../shared/wire.js";
import { StoreDamagedError } from "../store/errors.js";
import { keys } from "../store/store.js";
import type { DaemonState } from "./state.js";
import type { SandboxStatus } from "../tools/sandbox-probe.js";

/** What `reasonix daemon status` shows of the command sandbox. */
function sandboxView(status: SandboxStatus, network: boolean): Record<string, unknown> {
  return status.available
    ? { available: true, kind: status.kind, bwrap: status.bwrap, network, presets: ["read-only", "workspace-write"] }
    : { available: false, kind: status.kind, reason: status.reason, commands: "run unconfined; they ask and are granted as before" };
}

export async function httpRoutes(app: FastifyInstance, opts: { state: DaemonState }): Promise<void> {
  const { state } = opts;

  // A monitor polls this every few seconds (the benchmark every 10 ms): no per-request child logger,
  // whose bindings go through the logger's redaction (about half of a probe's cost). It logs nothing.
  app.get("/livez", { childLoggerFactory: (logger) => logger }, async () => ({ ok: true }));

  app.get("/readyz", async (_req, reply) => {
    const failure = state.store.failure;
    const storeWritable = failure === undefined;
    const ready = state.store.isOpen && storeWritable && !state.draining;
    // The reason in words: a store that cannot be written says why (a full disk, its folder removed).
    const reason = state.draining ? "draining" : !state.store.isOpen ? "the store is not open" : failure?.message;
    return reply
      .code(ready ? 200 : 503)
      .send({ ready, draining: state.draining, storeOpen: state.store.isOpen, storeWritable, ...(ready || !reason ? {} : { reason }) });
  });

  app.get("/status", async () => {
    const live = state.services.sessions.liveSessions().map((s) => s.operatorStatus());
    // A damaged store is when the status matters most: the count is unknown (null) and the damage
    // itself, noted by the failed read, is listed under `store`.
    const stored = await state.store.range(keys.sessionPrefix).then(
      (records) => records.length,
      (err: unknown) => {
        if (err instanceof StoreDamagedError) return null;
        throw err;
      },
    );
    return {
      version: state.services.version,
      build: state.build,
      wire: WIRE_MAJOR,
      pid: process.pid,
      uptimeSeconds: Math.round((Date.now() - state.startedAt) / 1000),
      state: state.draining ? "draining" : "ready",
      logFile: state.services.paths.logFile,
      socket: state.services.paths.socketPath,
      connections: state.connections,
      sessions: { live: live.length, stored, unloadedIdle: state.services.sessions.unloadedIdle },
      runningTurns: live.filter((s) => s.running).length,
      heldTurns: live.filter((s) => s.held !== null).length,
      queuedPrompts: live.reduce((n, s) => n + s.queuedPrompts, 0),
      pendingPermissions: live.reduce((n, s) => n + s.pendingPermissions.length, 0),
      inboxDepth: live.reduce((n, s) => n + s.inbox.depth, 0),
      store: state.store.health(),
      sandbox: sandboxView(await state.sandbox(), state.services.config().sandbox.network),
      liveSessions: live,
    };
  });

  // A shim of another build asks to take over: only an idle daemon with nobody attached agrees.
  app.post("/admin/drain", async () => {
    if (state.connections > 0 || !state.idle()) {
      return { draining: false, reason: `${state.connections} window(s) attached${state.idle() ? "" : ", work in progress"}`, build: state.build };
    }
    setImmediate(() => state.requestShutdown("replaced by a shim of another build"));
    return { draining: true, build: state.build, pid: process.pid };
  });

  app.post("/admin/shutdown", async () => {
    setImmediate(() => state.requestShutdown("shutdown requested over the socket"));
    return { stopping: true, pid: process.pid };
  });
}
