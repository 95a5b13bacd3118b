import { test } from "node:test";
import assert from "node:assert/strict";
import { commandShape, type CommandPart } from "./shell-syntax.js";

async function parts(command: string): Promise<CommandPart[]> {
  const shape = await commandShape(command);
  assert.equal(shape.kind, "parts", `${command}: ${shape.kind === "opaque" ? shape.reason : ""}`);
  return shape.kind === "parts" ? shape.parts : [];
}

async function opaque(command: string): Promise<string> {
  const shape = await commandShape(command);
  assert.equal(shape.kind, "opaque", command);
  return shape.kind === "opaque" ? shape.reason : "";
}

test("lists, pipelines, groups and negation split into the simple commands that run", async () => {
  const p = await parts("a 1 && b || c; d & e | f |& g\n(h; { i; }) | ! j");
  assert.deepEqual(
    p.map((x) => x.text),
    ["a 1", "b", "c", "d", "e", "f", "g", "h", "i", "j"],
  );
  assert.deepEqual(
    p.map((x) => x.piped),
    [false, false, false, false, false, true, true, false, false, true],
  );
  assert.deepEqual(p[0]!.argv, ["a", "1"]);
});

test("words come out after quote removal; plain means bare, with no quoting or pattern characters", async () => {
  const [p] = await parts(`echo 'a b' "c\\"d\\$e" f\\ g h"i"j ~/k *.ts x=1 --flag -- 42`);
  assert.deepEqual(p!.argv, ["echo", "a b", 'c"d$e', "f g", "hij", "~/k", "*.ts", "x=1", "--flag", "--", "42"]);
  assert.deepEqual(p!.plain, [true, false, false, false, false, false, false, true, true, true, true]);
  const [cont] = await parts("npm \\\n  test");
  assert.deepEqual(cont!.argv, ["npm", "test"]);
});

test("redirections: /dev/null and descriptor duplication touch no file; anything else does", async () => {
  for (const c of ["a 2>&1", "a >/dev/null", "a 2>/dev/null", "a &>/dev/null", "a >&2", "a 1>&-", "2>/dev/null a"]) {
    const [p] = await parts(c);
    assert.equal(p!.fileRedirects, false, c);
    assert.equal(p!.argv[0], "a", c);
  }
  for (const c of ["a > f", "a >> f", "a < f", "a &> f", "a >& f", "a >| f", "a <<< word", "a <<EOF\nx\nEOF", "> f a"]) {
    const [p] = await parts(c);
    assert.equal(p!.fileRedirects, true, c);
  }
  // A redirected group, and the grammar's reading of `a && b > f` (the shell gives `> f` to b alone), are not split.
  assert.match(await opaque("(a; b) > f"), /group/);
  assert.match(await opaque("a && b > f"), /group/);
  assert.deepEqual(
    (await parts("(a; b) 2>&1")).map((x) => x.text),
    ["a", "b"],
  );
  // The grammar puts words after a redirection target into the redirection: not trusted.
  assert.match(await opaque("echo >f rm -rf x"), /words after a redirection/);
});

test("variable assignments are marked; a bare assignment or export is opaque", async () => {
  const [p] = await parts("PATH=/tmp FOO='x y' npm test");
  assert.equal(p!.assignments, true);
  assert.deepEqual(p!.argv, ["npm", "test"]);
  await opaque("X=1");
  await opaque("export X=1; npm test");
});

test("anything that expands when run, control flow and parse errors are opaque", async () => {
  for (const c of [
    "a $(b)",
    "a `b`",
    'a "$(b)"',
    "a $X",
    'a "${X}"',
    "a $((1+2))",
    "a <(b)",
    "a >(b)",
    "a {1..3}",
    "a $'\\n'",
    "cat <<EOF\n$(id)\nEOF",
    "X=$(id) a",
  ]) {
    assert.equal(await opaque(c), "substitution or expansion", c);
  }
  for (const c of [
    "if a; then b; fi",
    "for i in 1; do a; done",
    "while a; do b; done",
    "case x in y) a;; esac",
    "f() { a; }",
    "[[ -f x ]] && a",
    "[ -f x ] && a",
    "a=(1 2) b",
    'a $"x"',
  ])
    await opaque(c);
  for (const c of ['echo "unterminated', "a &&", "a; ; b", "(a", "cat <<EOF\nno end", "a |"]) assert.equal(await opaque(c), "does not parse", c);
  assert.match(await opaque("a\rb"), /control characters/);
  assert.match(await opaque("a\u00a0b"), /unusual spaces/);
  assert.equal(await opaque("   "), "empty");
});
