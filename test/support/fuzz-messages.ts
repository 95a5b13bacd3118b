/**
 * Generated JSON-RPC input for the protocol fuzzer: params drawn from the ACP schema bundled with
 * @agentclientprotocol/sdk (and, for the vendor methods, from the JSON schema of the daemon's own
 * zod definitions), then mutated — wrong types anywhere, required members dropped, huge strings,
 * deep nesting, ids of every JSON type and size, invalid UTF-8, lines cut short or split at odd
 * places, responses to ids never sent. Each input carries what a correct agent must answer, so the
 * test checks every one of them.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import fc from "fast-check";
import { z } from "zod";
import { notificationMethods, requestMethods } from "../../daemon/acp/methods.js";

export type JsonSchema = { [k: string]: unknown };

export interface MethodSpec {
  method: string;
  schema: JsonSchema;
  /** true for notifications: never answered */
  notification: boolean;
}

/** Values the generator draws from where random text would never reach anything real. */
export interface FuzzPool {
  sessionIds: string[];
  itemIds: string[];
  cwd: string;
}

/** What a correct agent does with one input. */
export type Expectation =
  /** exactly one response echoing `idText`'s id; a result, or an error whose code is in `codes` */
  | { kind: "answer"; idText: string; codes: readonly number[]; resultAllowed: boolean }
  /** one error response with id null, code in `codes` */
  | { kind: "null-error"; codes: readonly number[] }
  /** either of the two above: bytes that a decoder may repair or refuse */
  | { kind: "answer-or-null-error"; idText: string; codes: readonly number[] }
  /** nothing at all */
  | { kind: "silent" };

export interface FuzzInput {
  /** what was done, for a failure message */
  label: string;
  /** the mutation or input family, for the tally */
  kind: string;
  /** the bytes written, each element one write (a line split at odd places has several) */
  writes: Buffer[];
  expect: Expectation;
}

/** Codes an agent may answer a well-meant request with; -32603 (a fault of ours) and -32700 are not among them. */
export const HANDLED = [-32002, -32602, -32600] as const;

let acpSchema: { $defs: Record<string, JsonSchema> } | undefined;

function schemaDefs(): Record<string, JsonSchema> {
  acpSchema ??= JSON.parse(readFileSync(createRequire(import.meta.url).resolve("@agentclientprotocol/sdk/schema/v1/schema.json"), "utf8")) as {
    $defs: Record<string, JsonSchema>;
  };
  return acpSchema.$defs;
}

/** Every client -> agent request and notification the ACP schema defines, by its `x-method`. */
export function acpMethods(): MethodSpec[] {
  const out: MethodSpec[] = [];
  for (const [name, def] of Object.entries(schemaDefs())) {
    if (def["x-side"] !== "agent" || typeof def["x-method"] !== "string") continue;
    if (name.endsWith("Request")) out.push({ method: def["x-method"], schema: def, notification: false });
    else if (name.endsWith("Notification")) out.push({ method: def["x-method"], schema: def, notification: true });
  }
  return out;
}

/** The vendor methods, from the zod schemas the daemon validates them with. */
function vendorMethods(): MethodSpec[] {
  const acp = new Set(acpMethods().map((m) => m.method));
  const out: MethodSpec[] = [];
  for (const [method, spec] of Object.entries(requestMethods)) {
    if (acp.has(method)) continue;
    out.push({ method, schema: z.toJSONSchema(spec.params, { io: "input", unrepresentable: "any" }) as JsonSchema, notification: false });
  }
  for (const [method, spec] of Object.entries(notificationMethods)) {
    if (acp.has(method)) continue;
    out.push({ method, schema: z.toJSONSchema(spec.params, { io: "input", unrepresentable: "any" }) as JsonSchema, notification: true });
  }
  return out;
}

/** Every method the fuzzer sends: the ACP schema's, then the vendor ones. */
export function fuzzedMethods(): MethodSpec[] {
  return [...acpMethods(), ...vendorMethods()];
}

const ANY_JSON = fc.jsonValue({ maxDepth: 2 });

function resolve(schema: JsonSchema, defs: Record<string, JsonSchema>): JsonSchema {
  let s = schema;
  for (let i = 0; i < 20; i++) {
    if (typeof s.$ref === "string") s = { ...defs[s.$ref.replace("#/$defs/", "")]!, ...withoutKey(s, "$ref") };
    else if (Array.isArray(s.allOf) && s.allOf.length === 1) s = { ...withoutKey(s, "allOf"), ...(s.allOf[0] as JsonSchema) };
    else return s;
  }
  return s;
}

function withoutKey(s: JsonSchema, key: string): JsonSchema {
  const { [key]: _dropped, ...rest } = s;
  return rest;
}

const text = fc.oneof(fc.string({ maxLength: 24 }), fc.string({ unit: "binary", maxLength: 12 }), fc.constantFrom("", " ", "../../etc/passwd", "\u0000", "🙂"));

/** An arbitrary for values that satisfy `schema` (mostly: formats and patterns are not honoured). */
export function arbitraryFor(schema: JsonSchema, defs: Record<string, JsonSchema>, pool: FuzzPool, depth = 0, key = ""): fc.Arbitrary<unknown> {
  const s = resolve(schema, defs);
  if ("const" in s) return fc.constant(s.const);
  if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as unknown[]));
  const variants = (s.oneOf ?? s.anyOf) as JsonSchema[] | undefined;
  if (Array.isArray(variants)) {
    const options = depth > 5 ? variants.slice(0, 1) : variants;
    const own = withoutKey(withoutKey(s, "oneOf"), "anyOf");
    return fc.oneof(...options.map((v) => arbitraryFor({ ...own, ...v }, defs, pool, depth + 1, key)));
  }
  const type = s.type;
  if (Array.isArray(type)) return fc.oneof(...type.map((t) => arbitraryFor({ ...s, type: t }, defs, pool, depth, key)));
  switch (type) {
    case "null":
      return fc.constant(null);
    case "boolean":
      return fc.boolean();
    case "integer": {
      const min = typeof s.minimum === "number" ? s.minimum : -1_000_000;
      const max = typeof s.maximum === "number" ? s.maximum : 1_000_000;
      return fc.oneof(fc.integer({ min: Math.max(min, -1_000_000), max: Math.min(max, 1_000_000) }), fc.constantFrom(Math.max(min, 0), 1));
    }
    case "number":
      return fc.double({ noNaN: true, noDefaultInfinity: true });
    case "string":
      if (key === "sessionId")
        return fc.oneof(
          fc.nat().map((i) => pool.sessionIds[i % pool.sessionIds.length] ?? "none"),
          text,
        );
      if (key === "itemId")
        return fc.oneof(
          fc.nat().map((i) => pool.itemIds[i % Math.max(1, pool.itemIds.length)] ?? "no-item"),
          text,
        );
      if (key === "cwd") return fc.constantFrom(pool.cwd, `${pool.cwd}/missing`, "relative/dir", "/");
      return text;
    case "array": {
      const items = (s.items as JsonSchema | undefined) ?? {};
      return depth > 5 ? fc.constant([]) : fc.array(arbitraryFor(items, defs, pool, depth + 1), { maxLength: 3 });
    }
    case "object": {
      const props = (s.properties ?? {}) as Record<string, JsonSchema>;
      const required = new Set((s.required ?? []) as string[]);
      const model: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [name, sub] of Object.entries(props)) {
        if (depth > 5 && !required.has(name)) continue;
        model[name] = arbitraryFor(sub, defs, pool, depth + 1, name);
      }
      return fc.record(model, { requiredKeys: [...required].filter((k) => k in model) });
    }
    default:
      return ANY_JSON;
  }
}

/** The JSON types a schema allows at the top, so a mutation can pick one it does not. */
function allowedTypes(schema: JsonSchema, defs: Record<string, JsonSchema>): Set<string> | undefined {
  const s = resolve(schema, defs);
  const variants = (s.oneOf ?? s.anyOf) as JsonSchema[] | undefined;
  if (Array.isArray(variants)) {
    const all = new Set<string>();
    for (const v of variants) {
      const t = allowedTypes(v, defs);
      if (!t) return undefined;
      for (const x of t) all.add(x);
    }
    return all;
  }
  if ("const" in s) return new Set([jsonType(s.const)]);
  if (Array.isArray(s.enum)) return new Set((s.enum as unknown[]).map(jsonType));
  if (typeof s.type === "string") return new Set(s.type === "integer" ? ["number"] : [s.type]);
  if (Array.isArray(s.type)) return new Set((s.type as string[]).map((t) => (t === "integer" ? "number" : t)));
  return undefined;
}

function jsonType(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  return typeof v;
}

const SAMPLES: Record<string, unknown> = { null: null, boolean: true, number: 7, string: "wrong", array: [1, "x"], object: { wrong: true } };

// ---------------------------------------------------------------------------------------------
// ids

/** An id as JSON text, with what it must come back as. */
interface IdChoice {
  text: string;
  valid: boolean;
}

export const idArbitrary: fc.Arbitrary<IdChoice> = fc.oneof(
  fc.string({ maxLength: 40 }).map((s) => ({ text: JSON.stringify(s), valid: true })),
  fc.string({ unit: "binary", maxLength: 20 }).map((s) => ({ text: JSON.stringify(s), valid: true })),
  fc.integer({ min: 1, max: 200_000 }).map((n) => ({ text: JSON.stringify("long-".repeat(n % 20_000)), valid: true })),
  fc.maxSafeInteger().map((n) => ({ text: String(n), valid: true })),
  fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }).map((n) => ({ text: n.toString(), valid: true })),
  fc
    .constantFrom("18446744073709551617", "-9007199254740993", "1e400", "-0", "0.1", "1.50", "1E2", "123456789012345678901234567890.5")
    .map((t) => ({ text: t, valid: true })),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => ({ text: JSON.stringify(d), valid: true })),
  fc.constant({ text: "null", valid: true }),
  fc.constantFrom("true", "false", "{}", '{"a":1}', "[]", "[1]").map((t) => ({ text: t, valid: false })),
);

// ---------------------------------------------------------------------------------------------
// mutations

type Mutation =
  | { kind: "none" }
  | { kind: "wrong-type"; at: number; to: string; path?: (string | number)[] }
  | { kind: "drop-required"; at: number }
  | { kind: "extra-member"; name: string; value: unknown }
  | { kind: "huge-string"; at: number; bytes: number }
  | { kind: "deep-nesting"; at: number; depth: number; open: "[" | "{" }
  | { kind: "invalid-utf8-in-string"; at: number; bytes: number[] }
  | { kind: "params-not-structured"; value: unknown };

type Framing = { kind: "line" } | { kind: "split"; cuts: number[] } | { kind: "truncated"; at: number } | { kind: "garbage-before"; bytes: number[] };

const BAD_UTF8 = [[0xff], [0xc3], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [0xc0, 0xaf], [0xe2, 0x82], [0xf4, 0x90, 0x80, 0x80]];

export interface FuzzLimits {
  /** largest huge string, bytes */
  hugeBytes: number;
  /** deepest nesting */
  maxDepth: number;
}

function mutationArbitrary(limits: FuzzLimits): fc.Arbitrary<Mutation> {
  return fc.oneof(
    { weight: 3, arbitrary: fc.constant({ kind: "none" } as const) },
    { weight: 6, arbitrary: fc.record({ kind: fc.constant("wrong-type" as const), at: fc.nat(), to: fc.constantFrom(...Object.keys(SAMPLES)) }) },
    { weight: 3, arbitrary: fc.record({ kind: fc.constant("drop-required" as const), at: fc.nat() }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant("extra-member" as const), name: fc.string({ maxLength: 8 }), value: ANY_JSON }) },
    {
      weight: 1,
      arbitrary: fc.record({ kind: fc.constant("huge-string" as const), at: fc.nat(), bytes: fc.integer({ min: 64 * 1024, max: limits.hugeBytes }) }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant("deep-nesting" as const),
        at: fc.nat(),
        depth: fc.integer({ min: 100, max: limits.maxDepth }),
        open: fc.constantFrom("[" as const, "{" as const),
      }),
    },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant("invalid-utf8-in-string" as const), at: fc.nat(), bytes: fc.constantFrom(...BAD_UTF8) }) },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant("params-not-structured" as const),
        value: fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null)),
      }),
    },
  );
}

const framingArbitrary: fc.Arbitrary<Framing> = fc.oneof(
  { weight: 6, arbitrary: fc.constant({ kind: "line" } as const) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("split" as const), cuts: fc.array(fc.nat(), { minLength: 1, maxLength: 4 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("truncated" as const), at: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("garbage-before" as const), bytes: fc.constantFrom(...BAD_UTF8, [0x20, 0x7b], [0x78]) }) },
);

/** Paths to every member and element of `value` (the root excluded), depth first. */
function paths(value: unknown, prefix: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  if (value !== null && typeof value === "object") {
    for (const [k, v] of Array.isArray(value) ? value.entries() : Object.entries(value)) {
      const p = [...prefix, k];
      out.push(p);
      paths(v, p, out);
    }
  }
  return out;
}

function setAt(root: unknown, path: (string | number)[], value: unknown): void {
  let node = root as Record<string | number, unknown>;
  for (const k of path.slice(0, -1)) node = node[k] as Record<string | number, unknown>;
  node[path.at(-1)!] = value;
}

function getAt(root: unknown, path: (string | number)[]): unknown {
  let node = root as Record<string | number, unknown>;
  for (const k of path) node = node[k] as Record<string | number, unknown>;
  return node;
}

/**
 * Members the schema requires that the agent accepts missing or null on purpose: clients in the
 * wild omit `mcpServers` (shared/acp-schemas.ts reads it as an empty list).
 */
const LENIENT: Record<string, ReadonlySet<string>> = { mcpServers: new Set(["missing", "null"]) };

const PLACEHOLDER = "\uE000fuzz-slot\uE000";

export interface GeneratedCase {
  method: MethodSpec;
  params: unknown;
  id: IdChoice;
  asNotification: boolean;
  mutation: Mutation;
  framing: Framing;
}

/**
 * Builds the bytes and the expectation of one case. Pure: the same case always gives the same
 * bytes, so a printed seed reproduces a failure.
 */
export function buildInput(c: GeneratedCase): FuzzInput {
  const defs = schemaDefs();
  const params = structuredClone(c.params);
  const m = c.mutation;
  const schema = resolve(c.method.schema, defs);
  const required = ((schema.required ?? []) as string[]).filter((k) => params !== null && typeof params === "object" && k in (params as object));
  let codes: readonly number[] = HANDLED;
  let resultAllowed = true;
  let label: string = m.kind;
  let slot: Buffer | undefined;
  let paramsValue: unknown = params;
  const all = paths(params);
  switch (m.kind) {
    case "wrong-type": {
      // At the root's required members the type is the schema's own, so -32602 is the only right answer.
      const topLevel = m.path ? m.path.length === 1 && required.includes(m.path[0] as string) : required.length > 0 && m.at % 2 === 0;
      const path = m.path ?? (topLevel ? [required[m.at % required.length]!] : all[m.at % Math.max(1, all.length)]);
      if (!path) break;
      const sub = topLevel ? ((schema.properties ?? {}) as Record<string, JsonSchema>)[path[0] as string] : undefined;
      const allowed = sub ? allowedTypes(sub, defs) : undefined;
      const current = jsonType(getAt(params, path));
      const to = m.to === current ? (current === "string" ? "number" : "string") : m.to;
      setAt(params, path, SAMPLES[to]);
      label = `wrong-type ${path.join(".")}: ${current} -> ${to}`;
      if (topLevel && allowed && !allowed.has(to) && !LENIENT[path[0] as string]?.has(to)) {
        codes = [-32602];
        resultAllowed = false;
      }
      break;
    }
    case "drop-required": {
      if (required.length === 0) break;
      const name = required[m.at % required.length]!;
      delete (params as Record<string, unknown>)[name];
      label = `drop-required ${name}`;
      if (LENIENT[name]?.has("missing")) break;
      codes = [-32602];
      resultAllowed = false;
      break;
    }
    case "extra-member":
      if (params !== null && typeof params === "object" && !Array.isArray(params)) (params as Record<string, unknown>)[`x-${m.name}`] = m.value;
      break;
    case "huge-string":
    case "deep-nesting":
    case "invalid-utf8-in-string": {
      const strings = all.filter((p) => typeof getAt(params, p) === "string");
      const path = m.kind === "invalid-utf8-in-string" ? strings[m.at % Math.max(1, strings.length)] : all[m.at % Math.max(1, all.length)];
      if (!path) break;
      setAt(params, path, PLACEHOLDER);
      label = `${m.kind} at ${path.join(".")}`;
      if (m.kind === "huge-string") slot = Buffer.from(JSON.stringify("h".repeat(m.bytes)));
      else if (m.kind === "deep-nesting") {
        const [open, close] = m.open === "[" ? ["[", "]"] : ['{"a":', "}"];
        slot = Buffer.from(`${open.repeat(m.depth)}1${close.repeat(m.depth)}`);
      } else slot = Buffer.concat([Buffer.from('"ok'), Buffer.from(m.bytes), Buffer.from('ok"')]);
      break;
    }
    case "params-not-structured":
      paramsValue = m.value;
      label = `params ${JSON.stringify(m.value)}`;
      codes = [-32600];
      resultAllowed = false;
      break;
    case "none":
      break;
  }

  // A notification method is sent as one mostly; as a request (with an id) it is no known request: -32601.
  const notify = c.method.notification ? !c.asNotification : c.asNotification;
  if (c.method.notification && !notify) {
    codes = m.kind === "params-not-structured" ? [-32600] : [-32601];
    resultAllowed = false;
  }
  const message = notify ? `{"jsonrpc":"2.0","method":${JSON.stringify(c.method.method)},"params":${JSON.stringify(paramsValue)}}` : undefined;
  let body = message ?? `{"jsonrpc":"2.0","id":${c.id.text},"method":${JSON.stringify(c.method.method)},"params":${JSON.stringify(paramsValue)}}`;
  let bytes: Buffer;
  if (slot) {
    const marker = JSON.stringify(PLACEHOLDER);
    const at = body.indexOf(marker);
    bytes = Buffer.concat([Buffer.from(body.slice(0, at)), slot, Buffer.from(body.slice(at + marker.length))]);
  } else bytes = Buffer.from(body);
  body = "";

  let expect: Expectation;
  // An invalid Request object is answered with id null even without an id (JSON-RPC 2.0, section 7's examples).
  if (notify) expect = m.kind === "params-not-structured" ? { kind: "null-error", codes: [-32600] } : { kind: "silent" };
  else if (!c.id.valid) expect = { kind: "null-error", codes: [-32600] };
  else if (!resultAllowed && codes.length === 1 && codes[0] === -32601) expect = { kind: "answer", idText: c.id.text, codes, resultAllowed };
  else if (m.kind === "invalid-utf8-in-string" && slot) expect = { kind: "answer-or-null-error", idText: c.id.text, codes: [...HANDLED, -32700] };
  else if (m.kind === "deep-nesting" && slot) expect = { kind: "answer-or-null-error", idText: c.id.text, codes: [...HANDLED, -32700] };
  else expect = { kind: "answer", idText: c.id.text, codes, resultAllowed };

  const f = c.framing;
  let writes: Buffer[];
  if (f.kind === "truncated") {
    const cut = 1 + (f.at % Math.max(1, bytes.length - 2));
    writes = [Buffer.concat([bytes.subarray(0, cut), Buffer.from("\n")])];
    expect = { kind: "null-error", codes: [-32700] };
    label += `, cut at byte ${cut} of ${bytes.length}`;
  } else if (f.kind === "garbage-before") {
    writes = [Buffer.concat([Buffer.from(f.bytes), bytes, Buffer.from("\n")])];
    expect = { kind: "null-error", codes: [-32700] };
    label += `, after bytes ${f.bytes.join(",")}`;
  } else if (f.kind === "split") {
    const line = Buffer.concat([bytes, Buffer.from("\n")]);
    const cuts = [...new Set(f.cuts.map((n) => 1 + (n % Math.max(1, line.length - 1))))].sort((a, b) => a - b);
    writes = [];
    let from = 0;
    for (const cut of cuts) {
      writes.push(line.subarray(from, cut));
      from = cut;
    }
    writes.push(line.subarray(from));
    label += `, split at ${cuts.join(",")}`;
  } else writes = [Buffer.concat([bytes, Buffer.from("\n")])];
  const kind = notify ? "notification" : c.id.valid ? (f.kind === "line" ? m.kind : `${m.kind}+${f.kind}`) : "invalid-id";
  return { label: `${c.method.method} ${notify ? "(notification) " : ""}id ${abbreviate(c.id.text)}: ${label}`, kind, writes, expect };
}

function abbreviate(s: string): string {
  return s.length > 40 ? `${s.slice(0, 37)}…(${s.length})` : s;
}

/** A request to a method that does not exist: -32601 with its id. */
export function unknownMethodInput(name: string, id: IdChoice): FuzzInput {
  const method = `session/${name.replace(/[^a-z]/gi, "") || "x"}-unknown`;
  const line = Buffer.from(`{"jsonrpc":"2.0","id":${id.text},"method":${JSON.stringify(method)},"params":{}}\n`);
  return {
    label: `${method} id ${abbreviate(id.text)}`,
    kind: "unknown-method",
    writes: [line],
    expect: id.valid ? { kind: "answer", idText: id.text, codes: [-32601], resultAllowed: false } : { kind: "null-error", codes: [-32600] },
  };
}

/**
 * A response to an id the agent never used: never answered. The error's message is the payload's
 * JSON text, not `String(payload)`: a generated object may have a `toString` member that is no
 * function (`{"toString":true}`), which `String` cannot convert.
 */
export function strayResponseInput(id: IdChoice, payload: unknown, asError: boolean): FuzzInput {
  const body = asError ? `"error":{"code":-32000,"message":${JSON.stringify(JSON.stringify(payload))}}` : `"result":${JSON.stringify(payload)}`;
  return {
    label: `response to unsent id ${abbreviate(id.text)}`,
    kind: "stray-response",
    writes: [Buffer.from(`{"jsonrpc":"2.0","id":${id.text},${body}}\n`)],
    // A response whose id is no id at all is no Response object: -32600 with id null.
    expect: id.valid ? { kind: "silent" } : { kind: "null-error", codes: [-32600] },
  };
}

/**
 * Every member of one sample of each method's params (the params themselves included), each given
 * a value of another JSON type in turn: wrong types in every field of every method, systematically.
 */
export function everyFieldWrong(methods: MethodSpec[], pool: FuzzPool, seed: number, perMethod = 60): FuzzInput[] {
  const defs = schemaDefs();
  const types = Object.keys(SAMPLES);
  const out: FuzzInput[] = [];
  let n = 0;
  for (const method of methods) {
    const arb = arbitraryFor(method.schema, { ...defs, ...((method.schema.$defs ?? {}) as Record<string, JsonSchema>) }, pool);
    const [params] = fc.sample(arb, { seed, numRuns: 1 });
    const targets = paths(params).slice(0, perMethod);
    for (const path of targets) {
      const id = { text: JSON.stringify(`field-${n++}`), valid: true };
      const to = types[n % types.length]!;
      out.push(buildInput({ method, params, id, asNotification: false, mutation: { kind: "wrong-type", at: 0, to, path }, framing: { kind: "line" } }));
    }
    const id = { text: JSON.stringify(`field-${n++}`), valid: true };
    out.push(
      buildInput({ method, params, id, asNotification: false, mutation: { kind: "params-not-structured", value: "not an object" }, framing: { kind: "line" } }),
    );
  }
  return out;
}

/** Every generated input, drawn over the given methods. */
export function inputArbitrary(methods: MethodSpec[], pool: FuzzPool, limits: FuzzLimits): fc.Arbitrary<FuzzInput> {
  const defs = schemaDefs();
  const cases = methods.map((method) =>
    fc
      .record({
        method: fc.constant(method),
        params: arbitraryFor(method.schema, { ...defs, ...((method.schema.$defs ?? {}) as Record<string, JsonSchema>) }, pool),
        id: idArbitrary,
        asNotification: fc.oneof({ weight: 9, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
        mutation: mutationArbitrary(limits),
        framing: framingArbitrary,
      })
      .map(built(buildInput)),
  );
  return fc.oneof(
    { weight: 20, arbitrary: fc.oneof(...cases) },
    { weight: 1, arbitrary: fc.tuple(fc.string({ maxLength: 10 }), idArbitrary).map(built(([n, id]) => unknownMethodInput(n, id))) },
    { weight: 1, arbitrary: fc.tuple(idArbitrary, ANY_JSON, fc.boolean()).map(built(([id, p, e]) => strayResponseInput(id, p, e))) },
  );
}

/** Thrown when the generator itself fails to build an input: a fault of the harness, never of the agent. */
export class FuzzGenerationError extends Error {
  /** what fast-check drew, as fast-check prints it */
  readonly drawn: string;
  constructor(drawn: string, cause: unknown) {
    super(`the fuzz generator failed to build an input from what fast-check drew: ${cause instanceof Error ? cause.message : fc.stringify(cause)}`, { cause });
    this.drawn = drawn;
  }
}

/**
 * A mapper that names what it was given when it throws: fast-check lets an exception in generation
 * through bare, without the seed, the path or the value, so a failure would otherwise be unreplayable.
 */
function built<T>(make: (drawn: T) => FuzzInput): (drawn: T) => FuzzInput {
  return (drawn) => {
    try {
      return make(drawn);
    } catch (err) {
      throw new FuzzGenerationError(abbreviateMiddle(fc.stringify(drawn), 4000), err);
    }
  };
}

/** The bytes of one write as text: printable ASCII as is, every other byte as \xNN, long runs elided in the middle. */
export function showBytes(bytes: Buffer, keep = 1200): string {
  const shown = (b: Buffer): string => {
    let out = "";
    for (const byte of b) out += byte >= 0x20 && byte < 0x7f && byte !== 0x5c ? String.fromCharCode(byte) : `\\x${byte.toString(16).padStart(2, "0")}`;
    return out;
  };
  if (bytes.length <= keep) return shown(bytes);
  const head = Math.floor((keep * 3) / 4);
  const tail = keep - head;
  return `${shown(bytes.subarray(0, head))}…(${bytes.length - keep} bytes elided)…${shown(bytes.subarray(bytes.length - tail))}`;
}

function abbreviateMiddle(s: string, keep: number): string {
  return s.length <= keep ? s : `${s.slice(0, keep - 200)}…(${s.length - keep} chars elided)…${s.slice(-200)}`;
}

/** One input as a failure message shows it: what it was, what it expected, every byte written. */
export function describeInput(input: FuzzInput): string {
  const total = input.writes.reduce((n, w) => n + w.length, 0);
  const lines = [
    `input: ${input.label} (${input.kind})`,
    `expected: ${abbreviateMiddle(JSON.stringify(input.expect), 1200)}`,
    `written (${input.writes.length} write(s), ${total} bytes):`,
  ];
  for (const w of input.writes) lines.push(`  ${showBytes(w)}`);
  return lines.join("\n");
}
