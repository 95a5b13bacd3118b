/**
 * A port nothing will listen on while a test runs. A port taken with listen(0) and let go again
 * (the old way) is back in the kernel's ephemeral range, where the next server started with
 * listen(0) in any test process (a scripted model, a daemon, an MCP server) may be given it: a
 * provider test meant to meet ECONNREFUSED once reached another test's model instead.
 */
import { readFileSync } from "node:fs";
import { connect } from "node:net";

/** Whether a connection to 127.0.0.1:`port` is refused right now. */
function refuses(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(false);
    });
    socket.once("error", (err: NodeJS.ErrnoException) => resolve(err.code === "ECONNREFUSED"));
  });
}

/** The first port of the kernel's ephemeral range (Linux; the usual 32768 elsewhere). */
function ephemeralStart(): number {
  try {
    return Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]) || 32768;
  } catch {
    return 32768;
  }
}

/**
 * A port on 127.0.0.1 that refuses connections: below the ephemeral range, so no server started
 * with listen(0) is given it, and checked to refuse now (a fixed service on it is skipped).
 */
export async function refusedPort(): Promise<number> {
  for (let port = ephemeralStart() - 1 - (process.pid % 500); port > 1024; port--) {
    if (await refuses(port)) return port;
  }
  throw new Error("no port below the ephemeral range refuses connections on 127.0.0.1");
}
