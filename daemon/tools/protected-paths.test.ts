import { test } from "node:test";
import assert from "node:assert/strict";
import { globToRegExp } from "./builtin/glob-match.js";
import { foldName, isProtected, PROTECTED_GLOBS, PROTECTED_NAMES, protectedName } from "./protected-paths.js";

const roots = ["/work/proj", "/data/extra"];

test("each protected name, the folder itself and anything under it, at any depth below a root", () => {
  for (const name of PROTECTED_NAMES) {
    assert.equal(protectedName(`/work/proj/${name}`, roots), name);
    assert.equal(protectedName(`/work/proj/${name}/a/b`, roots), name);
    assert.equal(protectedName(`/work/proj/vendor/lib/${name}/x`, roots), name);
  }
  assert.equal(isProtected("/work/proj/.git/config", roots), true);
  assert.equal(isProtected("/work/proj/.git/hooks/pre-commit", roots), true);
  // A nested repository, and a worktree's `.git` file.
  assert.equal(isProtected("/work/proj/sub/.git/config", roots), true);
  assert.equal(isProtected("/work/proj/worktree/.git", roots), true);
  assert.equal(isProtected("/work/proj/.husky/pre-commit", roots), true);
  assert.equal(isProtected("/work/proj/.vscode/tasks.json", roots), true);
  assert.equal(isProtected("/work/proj/.idea/workspace.xml", roots), true);
  assert.equal(isProtected("/work/proj/.claude/settings.json", roots), true);
  assert.equal(isProtected("/work/proj/.reasonix/config.json", roots), true);
});

test("every root counts: an additional directory is judged like cwd", () => {
  assert.equal(isProtected("/data/extra/.git/config", roots), true);
  assert.equal(isProtected("/data/extra/pkg/.envrc", roots), true);
  assert.equal(isProtected("/data/extra/src/a.ts", roots), false);
  // A root inside another: protected under the outer one.
  assert.equal(isProtected("/work/proj/.git/info/exclude", ["/work/proj/.git", "/work/proj"]), true);
});

test("names are matched case-insensitively and after compatibility folding", () => {
  assert.equal(protectedName("/work/proj/.GIT/config", roots), ".git");
  assert.equal(protectedName("/work/proj/.Git/hooks/pre-commit", roots), ".git");
  assert.equal(protectedName("/work/proj/.VSCode/settings.json", roots), ".vscode");
  assert.equal(protectedName("/work/proj/.ENVRC", roots), ".envrc");
  // ſ (long s) folds to s; a dotless ı upper-cases to I.
  assert.equal(protectedName("/work/proj/.hu\u017fky/pre-commit", roots), ".husky");
  assert.equal(protectedName("/work/proj/.\u0131dea/x.xml", roots), ".idea");
  assert.equal(foldName(".GIT"), ".git");
});

test("only whole components count: look-alike names are free", () => {
  for (const p of [
    "/work/proj/.envrc.example",
    "/work/proj/.envrc.d/x",
    "/work/proj/envrc",
    "/work/proj/.github/workflows/ci.yml",
    "/work/proj/.gitignore",
    "/work/proj/.gitattributes",
    "/work/proj/foo.git/config",
    "/work/proj/src/git/hooks.ts",
    "/work/proj/docs/.vscode-notes.md",
    "/work/proj/.claude.md",
    "/work/proj/src/a.txt",
  ])
    assert.equal(isProtected(p, roots), false, p);
});

test("only components below a root count; a path outside every root is not judged here", () => {
  // The user chose to work inside a protected folder: that root is theirs.
  assert.equal(isProtected("/home/u/.claude/notes.md", ["/home/u/.claude"]), false);
  assert.equal(isProtected("/home/u/.claude", ["/home/u/.claude"]), false);
  assert.equal(isProtected("/elsewhere/.git/config", roots), false);
  assert.equal(isProtected("/work/projX/.git/config", roots), false);
  assert.equal(isProtected("/work/.git/config", roots), false);
});

test("the globs say the same rule as isProtected, matched case-insensitively", () => {
  const globs = PROTECTED_GLOBS.map((g) => new RegExp(globToRegExp(g).source, "i"));
  const rels = [
    ".git",
    ".git/config",
    "sub/.git/config",
    ".GIT/hooks/x",
    "a/b/.husky/pre-commit",
    ".envrc",
    "x/.envrc",
    ".envrc.example",
    ".github/x",
    "foo.git/config",
    ".vscode",
    "src/a.txt",
    ".idea/x",
    ".claude/settings.json",
  ];
  for (const rel of rels)
    assert.equal(
      globs.some((g) => g.test(rel)),
      isProtected(`/work/proj/${rel}`, roots),
      rel,
    );
});
