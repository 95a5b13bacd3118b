/**
 * Where the daemon listens: its Unix socket (bound here, or the one systemd passed and owns), and
 * the optional loopback TCP listener with a fresh token in the 0600 token file. A socket file left
 * at the path is stale once the daemon holds the store's lock: only the lock holder removes it.
 */
import { rmSync, unlinkSync } from "node:fs";
import type { FastifyInstance } from "fastify";
import type { Paths } from "../../shared/paths.js";
import { errorText } from "../../shared/error-text.js";
import type { DaemonConfig } from "../config/config.js";
import { buildApp } from "./app.js";
import type { DaemonState } from "./state.js";
import { newToken, parseListen } from "./tcp-auth.js";

/** A listener could not be opened; the message names the address and the cause. */
export class ListenError extends Error {}

export interface Listeners {
  app: FastifyInstance;
  /** The loopback TCP listener and its host:port, when config.listen asked for one. */
  tcp: { app: FastifyInstance; address: string } | undefined;
}

async function listenTcp(state: DaemonState, paths: Paths, config: DaemonConfig): Promise<{ app: FastifyInstance; address: string }> {
  const at = parseListen(config.listen!);
  const token = newToken(paths.tokenFile);
  let port = at.port;
  const app = await buildApp(state, { tcp: { token, port: () => port, allowedOrigins: config.allowedOrigins } });
  await app.listen({ host: at.host, port: at.port });
  const bound = app.server.address();
  if (bound && typeof bound === "object") port = bound.port;
  const host = at.host.includes(":") ? `[${at.host}]` : at.host;
  return { app, address: `${host}:${port}` };
}

/** Serves a listening socket by its descriptor (fastify's listen takes paths and ports only). */
async function listenOnFd(app: FastifyInstance, fd: number): Promise<void> {
  await app.ready();
  await new Promise<void>((resolve, reject) => {
    app.server.once("error", reject);
    app.server.listen({ fd }, () => {
      app.server.off("error", reject);
      resolve();
    });
  });
}

/** Binds every listener or none: a failure closes what was opened and says which in words. */
export async function listen(state: DaemonState, paths: Paths, config: DaemonConfig, listenFd: number | undefined): Promise<Listeners> {
  if (listenFd === undefined) rmSync(paths.socketPath, { force: true });
  const app = await buildApp(state);
  try {
    if (listenFd === undefined) await app.listen({ path: paths.socketPath });
    else await listenOnFd(app, listenFd);
  } catch (err) {
    await app.close().catch(() => undefined);
    throw new ListenError(`cannot listen on ${paths.socketPath}: ${errorText(err)}`);
  }
  try {
    return { app, tcp: config.listen ? await listenTcp(state, paths, config) : undefined };
  } catch (err) {
    await app.close().catch(() => undefined);
    const message = errorText(err);
    // parseListen's own words already name the setting ("listen: 0.0.0.0 is not a loopback address").
    throw new ListenError(message.startsWith("listen:") ? message : `cannot listen on ${config.listen}: ${message}`);
  }
}

/** Closes the listeners; the token goes with TCP, the socket file with ours (never systemd's). */
export async function unlisten(listeners: Listeners, paths: Paths): Promise<void> {
  await listeners.tcp?.app.close();
  if (listeners.tcp) rmSync(paths.tokenFile, { force: true });
  await listeners.app.close();
}

/** The socket file, unless systemd passed it: the next connection starts the daemon again there. */
export function removeSocket(paths: Paths, listenFd: number | undefined): void {
  try {
    if (listenFd === undefined) unlinkSync(paths.socketPath);
  } catch {
    // already removed by the server's close
  }
}
