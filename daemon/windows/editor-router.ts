/**
 * Requests from the agent to an editor go to exactly one window: the one whose prompt started the
 * turn, else the most recently active attached window that offered the capability (DESIGN §4).
 */
import type { ClientCaps, ClientPort } from "./port.js";

export type Capability = Exclude<keyof ClientCaps, "extensionSurface"> | "any";

export class EditorRouter {
  private readonly attachWaiters = new Set<() => void>();

  constructor(
    private readonly attachments: () => Iterable<ClientPort>,
    private readonly turnOrigin: () => ClientPort | undefined,
  ) {}

  pick(cap: Capability, exclude?: ReadonlySet<ClientPort>): ClientPort | undefined {
    const ok = (p: ClientPort): boolean => !p.closed && !exclude?.has(p) && (cap === "any" || p.capabilities[cap]);
    const origin = this.turnOrigin();
    const attached = [...this.attachments()];
    if (origin && attached.includes(origin) && ok(origin)) return origin;
    return attached.filter(ok).sort((a, b) => b.lastActive - a.lastActive)[0];
  }

  /** Called by the session whenever a window attaches. */
  attached(): void {
    for (const w of [...this.attachWaiters]) w();
  }

  /** Resolves at the next attach, or false at timeout or abort. */
  waitForAttach(timeoutMs: number, signal: AbortSignal): Promise<boolean> {
    return new Promise((resolve) => {
      const done = (v: boolean): void => {
        clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
        this.attachWaiters.delete(onAttach);
        resolve(v);
      };
      const onAttach = (): void => done(true);
      const onAbort = (): void => done(false);
      const timer = setTimeout(() => done(false), Math.max(0, timeoutMs));
      timer.unref();
      this.attachWaiters.add(onAttach);
      signal.addEventListener("abort", onAbort, { once: true });
    });
  }
}
