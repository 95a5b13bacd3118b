/**
 * GET /acp: one WebSocket per editor window, one JSON-RPC message per text frame. The shim's upgrade
 * carries its wire version; a different major is refused before any ACP byte flows. A plain ACP
 * client (the remote-transport RFD's WebSocket profile: JSON-RPC in text frames, nothing else) sends
 * none of the shim's headers and is served as it is: no wire version to compare, no environment
 * (its sessions' commands get where programs are and the locale: PATH, HOME, LANG, … of the
 * daemon's own minimal environment, never a key), no pid, the default model.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { WebSocket } from "ws";
import { HEADER_BUILD, HEADER_ENV, HEADER_MODEL, HEADER_SHIM_PID, HEADER_UMASK, HEADER_WIRE, WIRE_MAJOR } from "../../shared/wire.js";
import { parseUmask } from "../tools/umask.js";
import { MAX_LINE_BYTES } from "../../shared/ndjson.js";
import { AcpConnection } from "../acp/connection.js";
import { closeRefusedUpgrade } from "./tcp-auth.js";
import { tickCork } from "./tick-cork.js";
import { textFrame, textFrames } from "./ws-frames.js";
import type { DaemonState } from "./state.js";

function header(req: FastifyRequest, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function decodeEnv(raw: string | undefined): Record<string, string> {
  if (!raw) return {};
  try {
    const parsed: unknown = JSON.parse(Buffer.from(raw, "base64").toString("utf8"));
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) {
      return Object.fromEntries(Object.entries(parsed).filter((e): e is [string, string] => typeof e[1] === "string"));
    }
  } catch {
    // a broken snapshot is treated as none: the session's tools get an empty environment, never the daemon's
  }
  return {};
}

export async function acpWebSocket(app: FastifyInstance, opts: { state: DaemonState; allowedOrigins: readonly string[] }): Promise<void> {
  const { state } = opts;

  const checkHandshake = async (req: FastifyRequest, reply: FastifyReply): Promise<void> => {
    closeRefusedUpgrade(req, reply);
    if (req.headers.origin && !opts.allowedOrigins.includes(req.headers.origin)) {
      await reply.code(403).send({ error: "browser origins are not accepted on this socket" });
      return;
    }
    if (state.draining) {
      await reply.code(503).send({ error: "the daemon is shutting down" });
      return;
    }
    // Only a shim says which wire it speaks; a client that says nothing speaks plain ACP.
    const wire = header(req, HEADER_WIRE);
    if (wire !== undefined && wire !== String(WIRE_MAJOR)) {
      await reply.code(426).send({
        error: `wire version ${wire} is not supported by daemon ${state.build} (wire ${WIRE_MAJOR}); run \`reasonix daemon stop\` and start again`,
      });
    }
  };

  app.get("/acp", { websocket: true, preValidation: checkHandshake }, (socket: WebSocket, req: FastifyRequest) => {
    const shimBuild = header(req, HEADER_BUILD);
    const pid = Number(header(req, HEADER_SHIM_PID));
    const raw = req.raw.socket;
    const cork = tickCork(raw);
    // Without an extension (none is offered) ws writes its frames at once and queues nothing, so
    // frames of ours, one buffer each, keep their place among its own.
    const ownFrames = socket.extensions === "";
    // False once the window is gone or dropped for falling too far behind.
    const writable = (): boolean => {
      if (socket.readyState !== socket.OPEN) return false;
      if (socket.bufferedAmount <= state.windowBacklogBytes) return true;
      conn.log.warn({ buffered: socket.bufferedAmount }, "window fell too far behind; dropping its connection");
      socket.terminate();
      return false;
    };
    const conn = new AcpConnection(
      (text, notification) => {
        if (!writable()) return;
        // Streamed notifications may wait for the next spaced flush; an answer or a question goes this turn.
        cork(!notification);
        if (ownFrames) raw.write(textFrame(text));
        else socket.send(text);
      },
      state.services,
      {
        env: header(req, HEADER_ENV) === undefined ? state.plainWindowEnv : decodeEnv(header(req, HEADER_ENV)),
        umask: parseUmask(header(req, HEADER_UMASK)),
        model: header(req, HEADER_MODEL) || undefined,
        shimPid: Number.isFinite(pid) ? pid : undefined,
      },
      () => socket.bufferedAmount,
      (paused) => (paused ? socket.pause() : socket.resume()),
      (texts, around) => {
        if (!writable()) return;
        cork(true);
        if (ownFrames) raw.write(textFrames(texts, around));
        else for (const text of texts) socket.send(`${around.head}${text}${around.tail}`);
      },
    );
    state.connections++;
    if (header(req, HEADER_WIRE) === undefined) conn.log.info({ userAgent: header(req, "user-agent") }, "window attached (a plain ACP client)");
    else conn.log.info({ shimPid: pid, shimBuild, sameBuild: shimBuild === state.build }, "window attached");
    socket.on("message", (data, isBinary) => {
      if (isBinary) return;
      conn.receive(data.toString());
    });
    socket.on("close", () => {
      state.connections--;
      conn.dispose();
      conn.log.info("window detached");
    });
    socket.on("error", (err) => conn.log.warn({ err }, "socket error"));
  });
}

export const WS_MAX_PAYLOAD = MAX_LINE_BYTES + 1024;
