/**
 * The store's keyspace, declared once. Every key the daemon writes is of one kind below; each kind
 * is its shape (the whole key, as store/README.md shows it), what it holds, the file that writes it
 * and, for the ledger and the conversation, what the integrity scan checks. The builders other
 * folders use (`keys`, `inboxKeys`, `checkpointKeys`, …) are made from these kinds; what belongs to
 * a session, and so what `session/delete` removes (removal.ts), is read from the shapes.
 *
 * A shape is literal text and placeholders: `<id>` the session's id; `<name, N digits>` a number
 * zero-padded to N digits (so byte order is numeric order); `<name, hex>` lowercase hex;
 * `<name, any>` any text, `!` included (last only); `<name>` one segment without `!`. Where `<id>`
 * sits says how the session owns the kind: the whole key after the prefix (`session!<id>`), the first
 * segment of a range (`event!<id>!…`), or a later segment (the list index: those keys are found
 * through the session's record).
 */

/** How a kind's keys name their session. */
export type SessionPlace =
  /** `<prefix><id>`: the session's one key of this kind. */
  | "key"
  /** `<prefix><id>!…`: the session's keys of this kind are one range. */
  | "range"
  /** The id is a later segment: the keys are found through the session's record. */
  | "within"
  /** The store's own: no session's. */
  | "none";

/** Numbers without holes, checked by the integrity scan against the session record's count. */
export interface Numbering {
  /** The first number of a session. */
  first: 0 | 1;
  /** The session record's field that counts them. */
  countedBy: "lastSeq" | "historyLength";
  /** What the damage says is missing ("ledger entries"). */
  entries: string;
}

interface KindSpec {
  shape: string;
  holds: string;
  /** The file under daemon/ whose code writes this kind. */
  writtenBy: string;
  scan?: Numbering;
}

/** What a placeholder holds. */
export type Form = { kind: "id" } | { kind: "digits"; width: number } | { kind: "hex" } | { kind: "any" } | { kind: "segment" };

const PLACEHOLDER = /<([^>]+)>/g;

function formOf(placeholder: string): Form {
  if (placeholder === "id") return { kind: "id" };
  const [, form] = placeholder.split(/,\s*/);
  const digits = /^(\d+) digits$/.exec(form ?? "");
  if (digits) return { kind: "digits", width: Number(digits[1]) };
  if (form === "hex") return { kind: "hex" };
  if (form === "any") return { kind: "any" };
  if (form === undefined) return { kind: "segment" };
  throw new Error(`keyspace: unknown placeholder <${placeholder}>`);
}

function patternOf(form: Form): string {
  if (form.kind === "digits") return `(\\d{${form.width}})`;
  return form.kind === "hex" ? "([0-9a-f]+)" : form.kind === "any" ? "([\\s\\S]+)" : "([^!]+)";
}
const escapeRegex = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

export class KeyKind {
  readonly prefix: string;
  readonly session: SessionPlace;
  readonly shape: string;
  readonly holds: string;
  readonly writtenBy: string;
  readonly scan: Numbering | undefined;
  /** Literal text around the placeholders: one more than there are placeholders. */
  private readonly pieces: string[];
  /** The placeholders, in order. */
  readonly forms: readonly Form[];
  private readonly pattern: RegExp;
  private readonly idAt: number;

  constructor(
    readonly name: string,
    spec: KindSpec,
  ) {
    this.shape = spec.shape;
    this.holds = spec.holds;
    this.writtenBy = spec.writtenBy;
    this.scan = spec.scan;
    this.pieces = spec.shape.split(PLACEHOLDER).filter((_, i) => i % 2 === 0);
    this.forms = [...spec.shape.matchAll(PLACEHOLDER)].map((m) => formOf(m[1]!));
    const head = this.pieces[0]!;
    this.prefix = head.slice(0, head.indexOf("!") + 1);
    if (!this.prefix) throw new Error(`keyspace: ${spec.shape} has no prefix ending in "!"`);
    if (this.forms.slice(0, -1).some((f) => f.kind === "any")) throw new Error(`keyspace: <…, any> must come last in ${spec.shape}`);
    const body = this.forms.map((f, i) => patternOf(f) + escapeRegex(this.pieces[i + 1]!));
    this.pattern = new RegExp(`^${escapeRegex(head)}${body.join("")}$`);
    this.idAt = this.forms.findIndex((f) => f.kind === "id");
    const after = this.pieces[this.idAt + 1];
    this.session = this.idAt < 0 ? "none" : this.idAt > 0 ? "within" : after === "" ? "key" : after?.startsWith("!") ? "range" : "within";
  }

  /** The key with these placeholder values, in order; numbers are padded to their width. */
  key(...parts: Array<string | number>): string {
    if (parts.length !== this.forms.length) throw new Error(`keyspace: ${this.shape} takes ${this.forms.length} parts, not ${parts.length}`);
    return this.fill(parts);
  }

  /** The prefix of every key whose first placeholders hold these values (fewer than all of them). */
  range(...parts: Array<string | number>): string {
    if (parts.length >= this.forms.length) throw new Error(`keyspace: a range of ${this.shape} names fewer than ${this.forms.length} parts`);
    return this.fill(parts);
  }

  /** The placeholder values of a key of this kind; undefined when it does not have the shape. */
  parse(key: string): string[] | undefined {
    const m = this.pattern.exec(key);
    return m ? m.slice(1) : undefined;
  }

  /** The session a key of this kind names; undefined for the store's own kinds and other shapes. */
  sessionOf(key: string): string | undefined {
    return this.idAt < 0 ? undefined : this.parse(key)?.[this.idAt];
  }

  private fill(parts: ReadonlyArray<string | number>): string {
    let out = this.pieces[0]!;
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i]!;
      const form = this.forms[i]!;
      out += (typeof part === "number" && form.kind === "digits" ? String(part).padStart(form.width, "0") : String(part)) + this.pieces[i + 1]!;
    }
    return out;
  }
}

const kind = (name: string, spec: KindSpec): KeyKind => new KeyKind(name, spec);

/** Every kind of key, in the order store/README.md lists them. */
export const keyspace = {
  session: kind("session", {
    shape: "session!<id>",
    holds: "the session's record: `SessionRecord` (sessions/types.ts)",
    writtenBy: "sessions/session-state.ts",
  }),
  event: kind("event", {
    shape: "event!<id>!<seq, 12 digits>",
    holds: "a ledger entry: a session/update as sent, turn_start, turn_end, interrupted, a permission decision",
    writtenBy: "sessions/session-state.ts",
    scan: { first: 1, countedBy: "lastSeq", entries: "ledger entries" },
  }),
  history: kind("history", {
    shape: "history!<id>!<n, 12 digits>",
    holds: "one message of the model conversation",
    writtenBy: "sessions/session-state.ts",
    scan: { first: 0, countedBy: "historyLength", entries: "conversation messages" },
  }),
  inboxHead: kind("inboxHead", { shape: "inboxhead!<id>", holds: "the inbox's order and flags", writtenBy: "inbox/inbox.ts" }),
  inboxItem: kind("inboxItem", { shape: "inbox!<id>!<itemId>", holds: "one inbox item", writtenBy: "inbox/inbox.ts" }),
  idempotency: kind("idempotency", {
    shape: "idem!<id>!<key, any>",
    holds: "an idempotency receipt: the item a client's key made, a fingerprint of its intent and text",
    writtenBy: "inbox/inbox.ts",
  }),
  checkpoint: kind("checkpoint", {
    shape: "checkpoint!<id>!<n, 12 digits>",
    holds: "a turn's checkpoint: the files it changed, their prior blobs, undo state",
    writtenBy: "records/checkpoints.ts",
  }),
  blob: kind("blob", {
    shape: "blob!<id>!<sha256, hex>",
    holds: "a file's bytes, base64, shared by the session's identical contents",
    writtenBy: "records/checkpoints.ts",
  }),
  job: kind("job", {
    shape: "job!<id>!<jobId>",
    holds: "a running background job: process group, its leader's start time, command",
    writtenBy: "records/job-records.ts",
  }),
  task: kind("task", { shape: "task!<id>!<n, 12 digits>", holds: "a subagent's conversation", writtenBy: "records/task-transcripts.ts" }),
  list: kind("list", {
    shape: "list!<inverted updatedAt, 13 digits>!<id>",
    holds: "`session/list`'s index: a titled session's `ListEntry`, newest first",
    writtenBy: "records/list-index.ts",
  }),
  listByCwd: kind("listByCwd", {
    shape: "listcwd!<cwd hash, hex>!<inverted updatedAt, 13 digits>!<id>",
    holds: "the same, per working directory",
    writtenBy: "records/list-index.ts",
  }),
  listVersion: kind("listVersion", {
    shape: "listindex!version",
    holds: "the list index was built (stores older than it get one once)",
    writtenBy: "records/list-index.ts",
  }),
  hookTrust: kind("hookTrust", {
    shape: "hooktrust!<repository hash, hex>",
    holds: "the user's answer to a repository's hooks: trusted or not, for the hash of its hook files",
    writtenBy: "hooks/trust.ts",
  }),
  removal: kind("removal", {
    shape: "deleting!<id>",
    holds: "a session/delete under way: the record is gone, the rest goes; a start finishes it",
    writtenBy: "store/removal.ts",
  }),
} as const;

export const KINDS: readonly KeyKind[] = Object.values(keyspace);

/** The kind whose prefix the key starts with (prefixes are prefix-free: at most one). */
export function kindOf(key: string): KeyKind | undefined {
  return KINDS.find((k) => key.startsWith(k.prefix));
}

/** Whether the key has the full shape of a declared kind. */
export function isDeclared(key: string): boolean {
  return kindOf(key)?.parse(key) !== undefined;
}

/** The session a key belongs to, wherever its kind puts the id; undefined for the store's own keys. */
export function sessionOfKey(key: string): string | undefined {
  return kindOf(key)?.sessionOf(key);
}

/**
 * The first key after every key that starts with `prefix`: its last character raised by one. Not
 * `prefix + "\xff"`, which keys are compared to as UTF-8 bytes: one whose next character is U+00FF
 * or above (an idempotency key in Chinese) sorts past it, and a prefix delete left it behind.
 */
export function pastPrefix(prefix: string): string {
  const last = prefix.charCodeAt(prefix.length - 1);
  // Every prefix in use ends in "!"; a surrogate or U+FFFF would need more than one step.
  if (!(last < 0xd800)) throw new Error(`no range for a prefix ending in U+${last.toString(16)}`);
  return prefix.slice(0, -1) + String.fromCharCode(last + 1);
}
