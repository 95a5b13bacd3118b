import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { type Form, isDeclared, KINDS, type KeyKind, kindOf, keyspace, sessionOfKey } from "./keyspace.js";

const REPO_ROOT = fileURLToPath(new URL("../../../", import.meta.url));

/** A value for each placeholder; text starts above U+00FF, where a `prefix + "\xff"` bound once ended ranges. */
function sample(kind: KeyKind, id: string): Array<string | number> {
  const value = (f: Form): string | number =>
    f.kind === "id" ? id : f.kind === "digits" ? 7 : f.kind === "hex" ? "0af3" : f.kind === "any" ? "键 with ! inside" : "键-segment";
  return kind.forms.map(value);
}

test("every kind has its own prefix ending in '!' that starts no other's, and its keys name their session", () => {
  for (const [name, kind] of Object.entries(keyspace)) assert.equal(kind.name, name);
  for (const kind of KINDS) {
    assert.match(kind.prefix, /^[a-z]+!$/, kind.shape);
    for (const other of KINDS) if (other !== kind) assert.ok(!other.prefix.startsWith(kind.prefix), `${other.shape} starts with ${kind.prefix}`);
    const key = kind.key(...sample(kind, "s-1"));
    assert.equal(kindOf(key), kind, key);
    assert.ok(isDeclared(key), key);
    assert.equal(sessionOfKey(key), kind.session === "none" ? undefined : "s-1", key);
    if (kind.session === "range") {
      assert.ok(key.startsWith(kind.range("s-1")), key);
      // A session whose id extends another's is not in the other's range.
      assert.ok(!kind.key(...sample(kind, "s-12")).startsWith(kind.range("s-1")), kind.shape);
    }
  }
  assert.equal(isDeclared("k!before"), false);
  assert.equal(isDeclared("event!s-1!7"), false, "a number not padded is not the ledger's shape");
  assert.equal(isDeclared("session!"), false);
});

test("how each kind holds its session id is read from its shape", () => {
  const places = Object.fromEntries(KINDS.map((k) => [k.name, k.session]));
  assert.deepEqual(places, {
    session: "key",
    event: "range",
    history: "range",
    inboxHead: "key",
    inboxItem: "range",
    idempotency: "range",
    checkpoint: "range",
    blob: "range",
    job: "range",
    task: "range",
    list: "within",
    listByCwd: "within",
    listVersion: "none",
    hookTrust: "none",
    removal: "key",
  });
  assert.equal(keyspace.event.key("a", 3), "event!a!000000000003");
  assert.equal(keyspace.listByCwd.range("0af3"), "listcwd!0af3!");
  assert.throws(() => keyspace.session.range("a"), /fewer than 1 parts/, "a whole key is no range: it would take the ids it starts");
  assert.throws(() => keyspace.event.key("a"), /takes 2 parts/);
});

/** store/README.md's keyspace table as the registry makes it. */
function readmeTable(): string {
  const whose = { key: "a session's: one key", range: "a session's: a range", within: "a session's: the keys its record names", none: "the store's own" };
  const scan = (k: KeyKind): string =>
    k.scan ? `numbered from ${k.scan.first}, no holes, at least the record's \`${k.scan.countedBy}\` of them; none without the record` : "—";
  return [
    "| Key | Whose | Holds | Integrity scan | Written by |",
    "| --- | --- | --- | --- | --- |",
    ...KINDS.map((k) => `| \`${k.shape}\` | ${whose[k.session]} | ${k.holds} | ${scan(k)} | \`${k.writtenBy}\` |`),
  ].join("\n");
}

test("store/README.md's keyspace table is the registry's, and each kind's writer exists", () => {
  const readme = readFileSync(`${REPO_ROOT}daemon/store/README.md`, "utf8");
  const table = /<!-- keyspace table: begin[^\n]*\n([\s\S]*?)\n<!-- keyspace table: end -->/.exec(readme)?.[1];
  assert.equal(table, readmeTable(), "store/README.md's table between its keyspace markers must be this (from keyspace.ts)");
  for (const kind of KINDS) assert.ok(existsSync(`${REPO_ROOT}daemon/${kind.writtenBy}`), `${kind.name}: daemon/${kind.writtenBy} is gone`);
});
