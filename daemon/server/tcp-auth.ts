/**
 * The optional loopback TCP listener's guard (DESIGN §3). A local WebSocket that any web page can
 * reach is a known class of CVE, so: loopback binds only, a bearer token on every route but /livez
 * (compared as SHA-256 digests in constant time), a loopback Host (against DNS rebinding), and no
 * browser Origin unless configured.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { renameSync, writeFileSync } from "node:fs";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";

const LOOPBACK = new Set(["127.0.0.1", "::1", "localhost"]);

export interface ListenAddress {
  host: string;
  port: number;
}

/** "127.0.0.1:7777", "[::1]:7777", "localhost:0"; anything not loopback is refused. */
export function parseListen(value: string): ListenAddress {
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(value.trim());
  if (!m) throw new Error(`listen: "${value}" is not host:port`);
  const host = m[1] ?? m[2]!;
  const port = Number(m[3]);
  if (!LOOPBACK.has(host)) throw new Error(`listen: ${host} is not a loopback address; the TCP listener binds 127.0.0.1, ::1 or localhost only`);
  if (port > 65535) throw new Error(`listen: port ${port} is out of range`);
  return { host, port };
}

export function newToken(tokenFile: string): string {
  const token = randomBytes(32).toString("hex");
  const tmp = `${tokenFile}.${process.pid}.tmp`;
  writeFileSync(tmp, `${token}\n`, { mode: 0o600 });
  renameSync(tmp, tokenFile);
  return token;
}

const digest = (s: string): Buffer => createHash("sha256").update(s).digest();

export function tcpGuard(app: FastifyInstance, opts: { token: string; port: () => number; allowedOrigins: readonly string[] }): void {
  const expected = digest(opts.token);
  app.addHook("onRequest", async (req: FastifyRequest, reply: FastifyReply) => {
    closeRefusedUpgrade(req, reply);
    const port = opts.port();
    const host = req.headers.host ?? "";
    const hosts = [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`];
    if (!hosts.includes(host)) return reply.code(403).send({ error: "the Host header must name this loopback listener" });
    const origin = req.headers.origin;
    if (origin && !opts.allowedOrigins.includes(origin)) return reply.code(403).send({ error: `origin ${origin} is not allowed` });
    if (req.url === "/livez") return;
    const auth = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? "")?.[1];
    if (!auth || !timingSafeEqual(digest(auth), expected)) return reply.code(401).send({ error: "a bearer token from the daemon's token file is required" });
  });
}

/**
 * A refused WebSocket upgrade leaves a socket the HTTP server no longer tracks; unless it is closed
 * after the answer, the client can hold it open and stall the daemon's shutdown.
 */
export function closeRefusedUpgrade(req: FastifyRequest, reply: FastifyReply): void {
  if (!req.headers.upgrade) return;
  reply.raw.once("finish", () => {
    if (reply.statusCode !== 101) req.raw.socket.destroy();
  });
}
