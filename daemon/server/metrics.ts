/**
 * GET /metrics in the Prometheus text format, through prom-client (loaded on the first scrape, so
 * it costs the daemon's start nothing). Gauges are read from the live state when scraped.
 *
 * prom-client's default metrics include the event loop's delay, `reasonix_nodejs_eventloop_lag_*`
 * (min, max, mean, stddev, p50, p90, p99 in seconds), sampled by perf_hooks every 10 ms and reset
 * at each scrape: each scrape reports the window since the one before. The sampling starts at the
 * first scrape, so a daemon nobody watches is not woken a hundred times a second for it.
 */
import type { FastifyInstance } from "fastify";
import type { Registry } from "prom-client";
import { keys } from "../store/store.js";
import type { DaemonState } from "./state.js";

async function buildRegistry(state: DaemonState): Promise<Registry> {
  const client = await import("prom-client");
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry, prefix: "reasonix_" });
  const live = () => state.services.sessions.liveSessions();
  const gauge = (name: string, help: string, read: () => number | Promise<number>, labels: Record<string, string> = {}): void => {
    new client.Gauge({
      name,
      help,
      labelNames: Object.keys(labels),
      registers: [registry],
      async collect() {
        this.set(labels, await read());
      },
    });
  };
  gauge("reasonix_build_info", "Build of the running daemon.", () => 1, { version: state.services.version, build: state.build });
  gauge("reasonix_attachments", "Editor windows connected.", () => state.connections);
  gauge("reasonix_sessions_live", "Sessions held in memory.", () => live().length);
  gauge("reasonix_sessions_stored", "Sessions in the store.", async () => (await state.store.range(keys.sessionPrefix)).length);
  gauge("reasonix_turns_running", "Turns running now.", () => live().filter((s) => s.running).length);
  gauge(
    "reasonix_turns_held",
    "Turns waiting for a window (none attached) before a change or a model request.",
    () => live().filter((s) => s.operatorStatus().held !== null).length,
  );
  gauge("reasonix_permissions_pending", "Permission questions waiting for an answer.", () =>
    live().reduce((n, s) => n + s.operatorStatus().pendingPermissions.length, 0),
  );
  gauge("reasonix_inbox_depth", "Pending inbox items across live sessions.", () => live().reduce((n, s) => n + s.operatorStatus().inbox.depth, 0));
  gauge("reasonix_model_rounds", "Model rounds run by live sessions.", () => live().reduce((n, s) => n + s.operatorStatus().modelRounds, 0));
  gauge("reasonix_search_threads", "grep and glob searches running on their own threads.", () => state.searchThreads());
  return registry;
}

export async function metricsRoute(app: FastifyInstance, opts: { state: DaemonState }): Promise<void> {
  let registry: Promise<Registry> | undefined;
  app.get("/metrics", async (_req, reply) => {
    const r = await (registry ??= buildRegistry(opts.state));
    return reply.header("content-type", r.contentType).send(await r.metrics());
  });
}
