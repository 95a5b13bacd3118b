/**
 * Per-method validation of what the agent writes, against the official ACP v1 schema bundled with
 * @agentclientprotocol/sdk (DESIGN §9). The schema root is useless for this: its anyOf includes
 * the extension shapes, which accept nearly anything (`{"result":null}` passes), so every message is
 * matched to its method's `$defs` entry through the `x-method` annotations instead.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { Ajv2020 } from "ajv/dist/2020.js";
import type { ErrorObject, ValidateFunction } from "ajv/dist/2020.js";

interface SchemaDef {
  "x-method"?: string;
  "x-side"?: string;
  [key: string]: unknown;
}

export interface AcpSchema {
  $defs: Record<string, SchemaDef>;
}

/** Which `$defs` entry describes each message the agent may send, keyed by method. */
interface MethodTables {
  /** agent -> client requests: params def */
  agentRequests: Map<string, string>;
  /** agent -> client notifications (including protocol-level ones): params def */
  agentNotifications: Map<string, string>;
  /** agent's responses to client requests: result def */
  agentResponses: Map<string, string>;
}

const SCHEMA_ID = "acp-v1";

/**
 * The validator every checker uses, at run time or (with `source`) for the validators
 * `npm run build` writes ahead (scripts/acp-validators.js): one configuration for both.
 */
export function acpAjv(schema: AcpSchema, opts: { source?: boolean } = {}): Ajv2020 {
  // discriminator: the schema marks SessionUpdate, ContentBlock, ... with it, and without it a
  // wrong field in one variant is reported as a failure of all fourteen.
  const ajv = new Ajv2020({ strict: false, allErrors: true, discriminator: true, ...(opts.source ? { code: { source: true } } : {}) });
  for (const format of ["int32", "int64", "uint16", "uint32", "uint64", "double"]) ajv.addFormat(format, true);
  // Lenient on purpose: ACP carries file paths and editor-specific schemes as "uri" (any non-empty string).
  ajv.addFormat("uri", /[\s\S]/);
  ajv.addSchema({ $id: SCHEMA_ID, $defs: schema.$defs });
  return ajv;
}

/** The `$ref` of a `$defs` entry inside the schema `acpAjv` adds. */
export const defRef = (defName: string): string => `${SCHEMA_ID}#/$defs/${defName}`;

/** Every `$defs` entry a checker validates with: the agent's requests, notifications and answers. */
export function methodDefs(schema: AcpSchema): string[] {
  const t = buildTables(schema);
  return [...new Set([...t.agentRequests.values(), ...t.agentNotifications.values(), ...t.agentResponses.values()])];
}

/** The schema text's digest, which the validators written ahead carry to say what they were made from. */
export const schemaDigest = (text: string): string => createHash("sha256").update(text).digest("hex");

/**
 * Validators `npm run build` compiled ahead from the SDK's stable schema (compiling them here took
 * about 0.45 s of CPU in each of some sixty end-to-end test files). Used only when made from this
 * very schema text; any other schema, or none written, compiles as before.
 */
function precompiled(text: string): Map<string, ValidateFunction> | undefined {
  let mod: Record<string, unknown>;
  try {
    mod = createRequire(import.meta.url)("./acp-validators.cjs") as Record<string, unknown>;
  } catch {
    return undefined;
  }
  if (mod.schemaDigest !== schemaDigest(text)) return undefined;
  const fns = new Map<string, ValidateFunction>();
  for (const [name, fn] of Object.entries(mod)) if (typeof fn === "function") fns.set(name, fn as ValidateFunction);
  return fns;
}

class SchemaIndex {
  readonly tables: MethodTables;
  private ajv: Ajv2020 | undefined;
  private readonly cache: Map<string, ValidateFunction>;

  constructor(
    readonly schema: AcpSchema,
    ready?: Map<string, ValidateFunction>,
  ) {
    this.cache = ready ?? new Map();
    this.tables = buildTables(schema);
  }

  validator(defName: string): ValidateFunction {
    let fn = this.cache.get(defName);
    if (!fn) {
      this.ajv ??= acpAjv(this.schema);
      fn = this.ajv.getSchema(defRef(defName));
      if (!fn) throw new Error(`ACP schema has no $defs/${defName}`);
      this.cache.set(defName, fn);
    }
    return fn;
  }
}

function buildTables(schema: AcpSchema): MethodTables {
  const defs = schema.$defs;
  const methodDefsUnder = (wrapper: string): string[] => {
    const root = defs[wrapper];
    if (!root) throw new Error(`ACP schema has no $defs/${wrapper}`);
    const found: string[] = [];
    const walk = (node: unknown): void => {
      if (Array.isArray(node)) {
        node.forEach(walk);
        return;
      }
      if (node === null || typeof node !== "object") return;
      for (const [key, value] of Object.entries(node)) {
        if (key === "$ref" && typeof value === "string" && value.startsWith("#/$defs/")) {
          const name = value.slice("#/$defs/".length);
          if (defs[name]?.["x-method"]) found.push(name);
        } else {
          walk(value);
        }
      }
    };
    walk(root);
    return found;
  };
  const byMethod = (names: string[]) => new Map(names.map((name) => [defs[name]!["x-method"]!, name] as const));

  // AgentRequest / AgentNotification / AgentResponse are the schema's own grouping of messages the
  // agent sends; `x-side: "protocol"` marks the `$/` notifications either side may send.
  const protocol = Object.keys(defs).filter((name) => defs[name]!["x-side"] === "protocol" && name.endsWith("Notification"));
  return {
    agentRequests: byMethod(methodDefsUnder("AgentRequest")),
    agentNotifications: byMethod([...methodDefsUnder("AgentNotification"), ...protocol]),
    agentResponses: byMethod(methodDefsUnder("AgentResponse")),
  };
}

const indexes = new Map<string, SchemaIndex>();

export function defaultSchemaPath(): string {
  return createRequire(import.meta.url).resolve("@agentclientprotocol/sdk/schema/v1/schema.json");
}

/** Compiling the schema takes a while; every checker over the same file shares one index. */
function indexFor(schemaPath: string): SchemaIndex {
  let index = indexes.get(schemaPath);
  if (!index) {
    const text = readFileSync(schemaPath, "utf8");
    index = new SchemaIndex(JSON.parse(text) as AcpSchema, schemaPath === defaultSchemaPath() ? precompiled(text) : undefined);
    indexes.set(schemaPath, index);
  }
  return index;
}

export interface AcpWireCheckerOptions {
  /** another schema file, e.g. the SDK's schema.unstable.json; default the stable v1 schema */
  schemaPath?: string;
}

export class AcpWireChecker {
  readonly problems: string[] = [];
  /** messages seen from the agent, so a test can tell "clean" from "nothing checked" */
  agentMessages = 0;

  private readonly index: SchemaIndex;
  /** client request id (JSON-encoded, so 1 and "1" stay apart) -> method, until the agent answers */
  private readonly clientPending = new Map<string, string>();
  /** agent request ids the client has not answered yet */
  private readonly agentPending = new Map<string, string>();

  constructor(options: AcpWireCheckerOptions = {}) {
    this.index = indexFor(options.schemaPath ?? defaultSchemaPath());
  }

  /** The methods this checker knows the agent may send, for tests of the checker itself. */
  get knownMethods(): { requests: string[]; notifications: string[]; responses: string[] } {
    const t = this.index.tables;
    return { requests: [...t.agentRequests.keys()], notifications: [...t.agentNotifications.keys()], responses: [...t.agentResponses.keys()] };
  }

  /** A line the client wrote to the agent's stdin: remembers request ids so responses can be checked. */
  fromClient(line: string): void {
    let msg: unknown;
    try {
      msg = JSON.parse(line);
    } catch {
      return; // tests send malformed lines on purpose; nothing to remember
    }
    if (!isRecord(msg) || !("id" in msg)) return;
    if ("result" in msg || "error" in msg) {
      this.agentPending.delete(idKey(msg.id));
    } else {
      // Invalid requests (no method, bad method) are remembered too: the agent still owes an error.
      this.clientPending.set(idKey(msg.id), typeof msg.method === "string" ? msg.method : "<invalid request>");
    }
  }

  /** A line the agent wrote to stdout. */
  fromAgent(line: string): void {
    this.agentMessages++;
    const where = (label: string) => `${label} (line: ${clip(line)})`;
    if (line.trim() === "") {
      this.problems.push("agent wrote a blank line to stdout");
      return;
    }
    let msg: unknown;
    try {
      msg = JSON.parse(line);
    } catch (err) {
      this.problems.push(where(`agent stdout line is not JSON (${(err as Error).message})`));
      return;
    }
    if (Array.isArray(msg)) {
      this.problems.push(where("agent sent a JSON array (ACP has no batches)"));
      return;
    }
    if (!isRecord(msg)) {
      this.problems.push(where("agent sent JSON that is not an object"));
      return;
    }
    if (msg.jsonrpc !== "2.0") {
      this.problems.push(where(`agent message lacks "jsonrpc": "2.0"`));
    }

    if ("method" in msg) {
      this.checkOutgoingCall(msg, where);
    } else if ("id" in msg) {
      this.checkResponse(msg, where);
    } else {
      this.problems.push(where("agent message is neither a request, a notification nor a response"));
    }
  }

  private checkOutgoingCall(msg: Record<string, unknown>, where: (label: string) => string): void {
    const method = msg.method;
    if (typeof method !== "string") {
      this.problems.push(where("agent message has a non-string method"));
      return;
    }
    if ("result" in msg || "error" in msg) {
      this.problems.push(where(`agent ${method} mixes a call with result/error`));
    }
    const isRequest = "id" in msg;
    const tables = this.index.tables;
    const kind = isRequest ? "request" : "notification";

    if (isRequest) {
      const id = msg.id;
      if (!(typeof id === "string" || (typeof id === "number" && Number.isInteger(id)))) {
        this.problems.push(where(`agent ${method} request has id ${JSON.stringify(id)}; use an integer or a string`));
      } else {
        const key = idKey(id);
        if (this.agentPending.has(key)) {
          this.problems.push(where(`agent ${method} request reuses id ${key} while ${this.agentPending.get(key)} is unanswered`));
        }
        this.agentPending.set(key, method);
      }
    }

    if ("params" in msg && msg.params !== undefined && !(typeof msg.params === "object" && msg.params !== null)) {
      this.problems.push(where(`agent ${method} ${kind} params must be an object or array`));
      return;
    }

    const defName = (isRequest ? tables.agentRequests : tables.agentNotifications).get(method);
    if (!defName) {
      if (method.startsWith("_")) return; // vendor extension: shape is its own business
      const other = isRequest ? tables.agentNotifications.has(method) : tables.agentRequests.has(method);
      this.problems.push(
        where(
          other
            ? `agent sent ${method} as a ${kind}; the schema has it as a ${isRequest ? "notification" : "request"}`
            : `agent sent unknown ${kind} method ${method} (not an ACP agent->client method, not _-prefixed)`,
        ),
      );
      return;
    }
    this.validate(defName, msg.params ?? {}, `agent->client ${method} ${kind} params`, where);
  }

  private checkResponse(msg: Record<string, unknown>, where: (label: string) => string): void {
    const hasResult = "result" in msg;
    const hasError = "error" in msg;
    const id = msg.id;
    if (hasResult === hasError) {
      this.problems.push(where(`agent response to id ${JSON.stringify(id)} must carry exactly one of result / error`));
      return;
    }

    let method: string | undefined;
    if (id === null && !this.clientPending.has("null")) {
      // id null is how JSON-RPC answers a message whose id could not be read (parse error).
      if (!hasError) this.problems.push(where("agent sent a result with id null"));
    } else if (typeof id !== "string" && typeof id !== "number") {
      this.problems.push(where(`agent response has id ${JSON.stringify(id)}; must be the request's id`));
    } else {
      const key = idKey(id);
      method = this.clientPending.get(key);
      if (method === undefined) {
        this.problems.push(where(`agent answered id ${key}, which is not an open client request (unknown or already answered)`));
      } else {
        this.clientPending.delete(key);
      }
    }
    const label = method ?? "unknown request";

    if (hasError) {
      const error = msg.error;
      if (!isRecord(error)) {
        this.problems.push(where(`agent error response to ${label}: error must be an object`));
        return;
      }
      if (typeof error.code !== "number" || !Number.isInteger(error.code)) {
        this.problems.push(where(`agent error response to ${label}: error.code must be an integer`));
      }
      if (typeof error.message !== "string") {
        this.problems.push(where(`agent error response to ${label}: error.message must be a string`));
      }
      return;
    }

    if (method === undefined) return;
    const defName = this.index.tables.agentResponses.get(method);
    if (defName) {
      this.validate(defName, msg.result, `agent ${method} result`, where);
    } else if (msg.result === undefined) {
      this.problems.push(where(`agent ${method} result is missing`));
    }
  }

  private validate(defName: string, value: unknown, label: string, where: (label: string) => string): void {
    const fn = this.index.validator(defName);
    if (!fn(value)) {
      this.problems.push(where(`${label} fail $defs/${defName}: ${describeErrors(fn.errors ?? [])}`));
    }
  }
}

/**
 * Ajv reports every failing branch of a union; keep the errors that say what is actually wrong,
 * and fold a row of `const` failures at one place into "must be one of".
 */
export function describeErrors(errors: ErrorObject[]): string {
  const noUnion = errors.filter((e) => e.keyword !== "anyOf" && e.keyword !== "oneOf");
  const specific = noUnion.filter((e) => e.keyword !== "const");
  const chosen = specific.length > 0 ? specific : noUnion.length > 0 ? noUnion : errors;

  const lines: string[] = [];
  const constsByPath = new Map<string, unknown[]>();
  for (const e of chosen) {
    const path = e.instancePath || "/";
    if (e.keyword === "const") {
      const list = constsByPath.get(path) ?? [];
      list.push((e.params as { allowedValue?: unknown }).allowedValue);
      constsByPath.set(path, list);
      continue;
    }
    let text = `${path} ${e.message ?? e.keyword}`;
    if (e.keyword === "enum") text += ` ${JSON.stringify((e.params as { allowedValues?: unknown }).allowedValues)}`;
    if (e.keyword === "discriminator") text += ` (got ${JSON.stringify((e.params as { tagValue?: unknown }).tagValue)})`;
    if (e.keyword === "additionalProperties") text += ` (${(e.params as { additionalProperty?: string }).additionalProperty})`;
    if (!lines.includes(text)) lines.push(text);
  }
  for (const [path, values] of constsByPath) lines.push(`${path} must be one of ${JSON.stringify(values)}`);
  const shown = lines.slice(0, 6);
  return shown.join("; ") + (lines.length > shown.length ? `; … ${lines.length - shown.length} more` : "");
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function idKey(id: unknown): string {
  return JSON.stringify(id) ?? "undefined";
}

function clip(line: string, max = 300): string {
  return line.length > max ? `${line.slice(0, max)}…(${line.length} chars)` : line;
}
