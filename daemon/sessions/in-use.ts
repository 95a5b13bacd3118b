/**
 * What keeps a session from being removed by a prune or the retention sweeper: a window attached,
 * a turn running, held or waiting, a question pending, a background job, queued inbox work (in
 * memory, or left paused in the store by a daemon that died), a load or a delete under way. The
 * manager's view is all it needs; the removal itself is session/delete's.
 */
import { Inbox } from "../inbox/inbox.js";
import type { Store } from "../store/store.js";
import type { PruneHost } from "./retention.js";
import type { Session } from "./session.js";

export interface ManagerView {
  readonly store: Store;
  live(id: string): Session | undefined;
  loading(id: string): boolean;
  deleting(id: string): boolean;
  delete(id: string): Promise<void>;
}

/** What keeps a session from being pruned, as far as memory knows; undefined when nothing. */
function busyReason(view: ManagerView, id: string): string | undefined {
  if (view.loading(id)) return "a window is loading it";
  if (view.deleting(id)) return "it is being deleted";
  const a = view.live(id)?.activity();
  if (!a) return undefined;
  if (a.windows > 0) return `${a.windows} window${a.windows === 1 ? " is" : "s are"} attached`;
  if (a.running) return "a turn is running";
  if (a.busy) return "a turn is waiting to run";
  if (a.questions > 0) return "a permission question is pending";
  if (a.jobs > 0) return "a background job is running";
  if (a.queued > 0) return "its inbox holds queued work";
  return undefined;
}

/** A stored session's inbox may hold work a daemon that died left paused: that is kept too. */
async function storedWork(view: ManagerView, id: string): Promise<string | undefined> {
  if (view.live(id)) return undefined;
  return (await Inbox.open(view.store, id)).depth() > 0 ? "its inbox holds queued work" : undefined;
}

export function pruneHostOf(view: ManagerView): PruneHost {
  return {
    store: view.store,
    liveRecord: (id) => view.live(id)?.record,
    inUse: async (id) => busyReason(view, id) ?? (await storedWork(view, id)),
    removeUnused: async (id) => {
      const reason = busyReason(view, id) ?? (await storedWork(view, id));
      if (reason) return reason;
      // A window may have attached while the inbox was read: checked again with nothing awaited
      // before delete() takes the session out of reach.
      const now = busyReason(view, id);
      if (now) return now;
      await view.delete(id);
      return undefined;
    },
  };
}
