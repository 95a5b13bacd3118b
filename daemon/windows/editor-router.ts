/**
 * Requests from the agent to an editor go to exactly one window: the one whose prompt started the
 * turn, else the most recently active attached window that offered the capability (DESIGN §4).
 */
import type { Attachments } from "./attachments.js";
import type { ClientCaps, ClientPort } from "./port.js";

export type Capability = Exclude<keyof ClientCaps, "extensionSurface"> | "any";

export class EditorRouter {
  constructor(
    private readonly attachments: Pick<Attachments, "waitForAttach"> & Iterable<ClientPort>,
    private readonly turnOrigin: () => ClientPort | undefined,
  ) {}

  pick(cap: Capability, exclude?: ReadonlySet<ClientPort>): ClientPort | undefined {
    const ok = (p: ClientPort): boolean => !p.closed && !exclude?.has(p) && (cap === "any" || p.capabilities[cap]);
    const origin = this.turnOrigin();
    const attached = [...this.attachments];
    if (origin && attached.includes(origin) && ok(origin)) return origin;
    return attached.filter(ok).sort((a, b) => b.lastActive - a.lastActive)[0];
  }

  /** Resolves true at the next attach, or false at the timeout or abort: a question waits for a window. */
  waitForAttach(timeoutMs: number, signal: AbortSignal): Promise<boolean> {
    return this.attachments.waitForAttach(timeoutMs, signal);
  }
}
