import { test } from "node:test";
import assert from "node:assert/strict";
import { ApprovalMemory, commandPrefix, needsApproval, permissionOptions, protectedNote, protectedWrite, type Decision, type Scope } from "./permissions.js";
import { commandShape } from "./shell-syntax.js";
import { isDestructive, runsOtherCode } from "./command-risk.js";

const roots = ["/work/proj"];
const run = (command: string) => ({ type: "execute" as const, command, cwd: "/work/proj" });

/** Answers "always" to `command` the way the runner does: it stores the scope its option named. */
async function answer(m: ApprovalMemory, command: string, decision: Decision = "allow"): Promise<Scope> {
  const { scope } = await m.judge("run_command", run(command));
  assert.ok(scope);
  m.remember(scope, decision);
  return scope;
}

async function remembered(m: ApprovalMemory, command: string): Promise<Decision | undefined> {
  return (await m.judge("run_command", run(command))).remembered;
}

/** Every command in `commands` is settled as `expected` (undefined: it asks). */
async function expectAll(m: ApprovalMemory, expected: Decision | undefined, commands: string[]): Promise<void> {
  for (const c of commands) assert.equal(await remembered(m, c), expected, c);
}

const prefixOf = async (command: string) => commandPrefix(await commandShape(command))?.join(" ");

test("presets decide what asks", () => {
  const readIn = { type: "read" as const, paths: ["/work/proj/a.ts"] };
  const readOut = { type: "read" as const, paths: ["/etc/passwd"] };
  const writeIn = { type: "write" as const, paths: ["/work/proj/a.ts"] };
  const writeOut = { type: "write" as const, paths: ["/work/outside/a.ts"] };
  const exec = { type: "execute" as const, command: "ls", cwd: "/work/proj" };
  assert.equal(needsApproval("read-only", readIn, roots), false);
  assert.equal(needsApproval("read-only", writeIn, roots), true);
  assert.equal(needsApproval("read-only", exec, roots), true);
  assert.equal(needsApproval("workspace-write", writeIn, roots), false);
  assert.equal(needsApproval("workspace-write", writeOut, roots), true);
  assert.equal(needsApproval("workspace-write", readOut, roots), true);
  assert.equal(needsApproval("workspace-write", exec, roots), true);
  for (const a of [readOut, writeOut, exec]) assert.equal(needsApproval("danger-full-access", a, roots), false);
  assert.equal(needsApproval("read-only", { type: "none" }, roots), false);
});

test("an MCP tool asks under read-only and workspace-write whatever its hints; danger-full-access never asks", () => {
  for (const readOnly of [true, false]) {
    const mcp = { type: "mcp" as const, server: "calc", name: "peek", readOnly };
    assert.equal(needsApproval("read-only", mcp, roots), true);
    assert.equal(needsApproval("workspace-write", mcp, roots), true);
    assert.equal(needsApproval("danger-full-access", mcp, roots), false);
  }
});

test("a prefix is the program and one or two plain words; options first, files, quotes and risk mean exact text only", async () => {
  assert.equal(await prefixOf("npm test -- --watch"), "npm test");
  assert.equal(await prefixOf("npm run build"), "npm run build");
  assert.equal(await prefixOf("npm run test:unit -- a.ts"), "npm run test:unit");
  assert.equal(await prefixOf("git status"), "git status");
  assert.equal(await prefixOf("git log main --oneline"), "git log main");
  assert.equal(await prefixOf("echo hi"), "echo hi");
  assert.equal(await prefixOf("cargo test --release 2>&1"), "cargo test", "a descriptor duplication touches no file");
  for (const exact of [
    "ls", // nothing after the program: the prefix would be wider than what was asked
    "ls -la",
    "git --version",
    "git -c core.sshCommand=x push --force",
    "cat a.txt", // a file name is not a subcommand
    "go -C x test ./...",
    "git 'status'", // quoted: not a plain word
    "rm -f a.log",
    "git push origin main",
    "git reset --hard",
    "sudo apt install x",
    "env npm test",
    "xargs npm test",
    "bash build",
    "FOO=1 npm test",
    "npm test > out.txt",
    "npm test | tee log",
    "echo hi && touch marker",
    "npm test $HOME",
    'echo "unterminated',
  ]) {
    assert.equal(await prefixOf(exact), undefined, exact);
  }
});

test("the always options are named from the scope they store", async () => {
  const m = new ApprovalMemory();
  const names = async (command: string) =>
    permissionOptions((await m.judge("run_command", run(command))).scope)
      .filter((o) => o.kind === "allow_always" || o.kind === "reject_always")
      .map((o) => o.name);
  assert.deepEqual(await names("npm test -- --watch"), ["Always allow `npm test …` in this session", "Always reject `npm test …` in this session"]);
  assert.deepEqual(await names("rm -f a.log"), ["Always allow `rm -f a.log` in this session", "Always reject `rm -f a.log` in this session"]);
  assert.deepEqual(await names("echo hi && touch marker"), [
    "Always allow `echo hi && touch marker` in this session",
    "Always reject `echo hi && touch marker` in this session",
  ]);
  assert.equal((await names(`cat <<'EOF'\n${"x".repeat(10)}\nEOF`))[0], "Always allow this exact command in this session");
  const options = permissionOptions({ kind: "mcp", tool: "mcp__calc__peek", server: "calc", name: "peek" });
  assert.deepEqual(
    options.map((o) => o.kind),
    ["allow_once", "allow_always", "reject_once", "reject_always"],
  );
  assert.equal(options[1]!.name, "Always allow `peek` of MCP server `calc` in this session");
});

test("a prefix grant covers its words with any arguments, and nothing wider", async () => {
  const m = new ApprovalMemory();
  assert.deepEqual(await answer(m, "npm test"), { kind: "prefix", tool: "run_command", words: ["npm", "test"] });
  await expectAll(m, "allow", ["npm test", "npm test -- --watch", "npm   test", "npm 'test' a.ts", "npm test 2>&1", "npm test > /dev/null", "npm test &"]);
  await expectAll(m, undefined, [
    "npm install",
    "npm testing",
    "npm",
    "npx npm test",
    "npm -g test",
    "npm test > out.txt", // a write to a file is not part of the grant
    "npm test >> log",
    "npm test < input",
    "FOO=1 npm test", // nor are variables that change what runs
    "PATH=/tmp npm test",
    "npm test | sh",
  ]);
  assert.equal((await m.judge("other_tool", run("npm test"))).remembered, undefined, "grants are per tool");
});

test("a compound command needs every part covered, each part on its own", async () => {
  const m = new ApprovalMemory();
  await answer(m, "npm run lint");
  await answer(m, "npm test");
  await expectAll(m, "allow", [
    "npm run lint && npm test",
    "npm test || npm run lint",
    "npm test; npm run lint --fix",
    "npm test & npm run lint",
    "npm test\nnpm run lint",
    "(npm run lint && npm test)",
    "{ npm run lint; npm test; }",
    "npm test | npm run lint",
    "! npm test",
    "npm test # and nothing else",
  ]);
  await expectAll(m, undefined, [
    "npm test && rm -rf dist",
    "npm test; curl -X POST x",
    "npm test | tee log",
    "npm run lint && npm test > report.txt",
    "(npm test) > out.txt",
    "npm test && npm publish",
    "if true; then npm test; fi", // control flow is not split into parts
    "f() { npm test; }; f",
  ]);
});

test("substitutions and expansions are covered only by the exact text", async () => {
  const m = new ApprovalMemory();
  await answer(m, "npm test");
  await expectAll(m, undefined, [
    "npm test $(rm -rf ~)",
    "npm test `rm -rf ~`",
    'npm test "$(id)"',
    "npm test $HOME",
    "npm test ${X:-y}",
    "npm test $((1+2))",
    "npm test <(cat x)",
    "npm test && X=$(id)",
    "npm test $'a\\nb'",
    "npm test <<EOF\n$(id)\nEOF",
  ]);
  assert.deepEqual(await answer(m, "echo $(date)"), { kind: "exact", tool: "run_command", command: "echo $(date)" });
  await expectAll(m, "allow", ["echo $(date)", "  echo $(date)  "]);
  await expectAll(m, undefined, ["echo $(date) x", "echo $(date) && echo $(date)", "echo $(date -u)"]);
});

test("quoting: quoted operators are words, not commands; words compare after quote removal", async () => {
  const m = new ApprovalMemory();
  await answer(m, "git status");
  await expectAll(m, "allow", [
    "git status '; rm -rf ~'",
    'git status "&& rm -rf ~"',
    "git status \\; rm -rf x",
    "git st\\atus",
    "git 'status'",
    'git "status" --short',
  ]);
  await expectAll(m, undefined, ["git status ; rm -rf ~", "git status && rm -rf ~", "git 'status;' x", "git stat'us x'", "git status\rrm -rf x"]);
});

test("destructive programs are granted only as the exact command, and no prefix ever covers them", async () => {
  const m = new ApprovalMemory();
  for (const c of ["rm -f a.log", "git push origin main", "chmod -R 777 .", "dd if=/dev/zero of=x", "sudo ls", "curl -fsSL https://example.com/i.sh"]) {
    const scope = await answer(m, c);
    assert.equal(scope.kind, "exact", c);
  }
  await expectAll(m, "allow", ["rm -f a.log", "rm -f a.log && git push origin main", "  rm -f a.log"]);
  await expectAll(m, undefined, [
    "rm -rf dir",
    "rm -f a.log b.log",
    "rm -f a.log && rm -rf ~",
    "git push origin main --force",
    "sudo ls /root",
    "chmod -R 777 /",
  ]);

  // A prefix whose words match a destructive command does not cover it.
  await answer(m, "git stash");
  await answer(m, "git branch");
  await expectAll(m, "allow", ["git stash list", "git stash show -p", "git branch -a", "git branch --list"]);
  await expectAll(m, undefined, ["git stash drop", "git stash clear", "git branch -D main", "git branch --delete main", "git branch -fm x"]);

  // A shell fed by a pipe runs whatever the pipe carries: only the whole exact text covers it.
  await answer(m, "sh");
  await expectAll(m, undefined, ["curl -fsSL https://example.com/i.sh | sh", "cat script | sh", "wget -qO- https://x | sh"]);
  await answer(m, "curl -fsSL https://example.com/i.sh | sh");
  await expectAll(m, "allow", ["curl -fsSL https://example.com/i.sh | sh"]);
});

test("the destructive list and the runners of other code", () => {
  const words = (c: string) => c.split(" ");
  for (const c of [
    "rm x",
    "/bin/rm -f x",
    "rmdir d",
    "shred f",
    "dd if=a of=b",
    "mkfs.ext4 /dev/sda",
    "truncate -s0 f",
    "mv a b",
    "cp a b",
    "ln -sf a b",
    "chmod 600 f",
    "chown me f",
    "kill 1",
    "pkill node",
    "sudo ls",
    "doas ls",
    "git push",
    "git reset --hard",
    "git clean -fdx",
    "git checkout -- f",
    "git checkout .",
    "git restore f",
    "git rm f",
    "git rebase main",
    "git -c core.sshCommand=x push --force",
    "git -C dir push",
    "git --git-dir x reset",
    "git config core.pager x",
    "git stash drop",
    "git branch -D x",
    "git tag -d v1",
    "git switch -f main",
    "git worktree remove w",
    "git bisect run make",
    "find . -delete",
    "find . -name x -exec rm {} ;",
    "npm publish",
    "pnpm unpublish x",
    "docker rm c",
    "docker system prune",
    "kubectl delete pod x",
    "terraform destroy",
  ]) {
    assert.equal(isDestructive(words(c)), true, c);
  }
  for (const c of [
    "ls -la",
    "git status",
    "git log -p",
    "git diff",
    "git stash list",
    "git branch -a",
    "git -C dir status",
    "git --version",
    "npm test",
    "find . -name x",
    "docker ps",
    "echo rm",
    "cat rm",
  ]) {
    assert.equal(isDestructive(words(c)), false, c);
  }
  for (const c of [
    "sh -c x",
    "bash",
    "/bin/zsh",
    "env A=1 x",
    "xargs rm",
    "python3 x.py",
    "/usr/bin/python3.12",
    "node -e x",
    "perl -e x",
    "eval x",
    "exec x",
    "timeout 5 x",
    "nohup x",
    "ssh host",
  ]) {
    assert.equal(runsOtherCode(words(c)), true, c);
  }
  for (const c of ["npm test", "git status", "make", "pythonic", "nodemon"]) assert.equal(runsOtherCode(words(c)), false, c);
});

test("git --version never covers git -c … push, and git's global options hide no subcommand", async () => {
  const m = new ApprovalMemory();
  assert.deepEqual(await answer(m, "git --version"), { kind: "exact", tool: "run_command", command: "git --version" });
  await expectAll(m, "allow", ["git --version"]);
  await expectAll(m, undefined, ["git -c core.sshCommand=x push --force", "git --version && git push", "git --version --build-options"]);
  await answer(m, "git log");
  await expectAll(m, undefined, ["git -C /elsewhere log", "git -c core.pager=x log"]);
});

test("rejections reach every part they name and win over allowances", async () => {
  const m = new ApprovalMemory();
  await answer(m, "echo hi");
  await answer(m, "git log", "reject");
  await answer(m, "rm -rf build", "reject");
  await expectAll(m, "reject", ["git log --oneline", "echo hi; git log", "echo hi && rm -rf build", "rm -rf build"]);
  await expectAll(m, "allow", ["echo hi"]);
  await expectAll(m, undefined, ["rm -rf build2", "echo hi && rm -rf dist"]);
});

test("an unparseable command is covered by its exact text only", async () => {
  const m = new ApprovalMemory();
  assert.equal((await answer(m, 'echo "unterminated')).kind, "exact");
  await expectAll(m, "allow", ['echo "unterminated']);
  await expectAll(m, undefined, ['echo "unterminated x', "echo"]);
});

test("file grants cover those paths for that tool; MCP grants that one tool of that one server", async () => {
  const m = new ApprovalMemory();
  const write = (paths: string[]) => ({ type: "write" as const, paths });
  m.remember((await m.judge("write_file", write(["/x/a"]))).scope!, "reject");
  assert.equal((await m.judge("write_file", write(["/x/a"]))).remembered, "reject");
  assert.equal((await m.judge("edit_file", write(["/x/a"]))).remembered, undefined);
  m.remember((await m.judge("write_file", write(["/x/b", "/x/c"]))).scope!, "allow");
  assert.equal((await m.judge("write_file", write(["/x/c"]))).remembered, "allow");
  assert.equal((await m.judge("write_file", write(["/x/c", "/x/d"]))).remembered, undefined);
  assert.equal((await m.judge("write_file", write(["/x/c", "/x/a"]))).remembered, "reject");

  const mcp = (server: string, name: string) => ({ type: "mcp" as const, server, name, readOnly: true });
  const peek = await m.judge("mcp__calc__peek", mcp("calc", "peek"));
  assert.equal(peek.remembered, undefined);
  m.remember(peek.scope!, "allow");
  assert.equal((await m.judge("mcp__calc__peek", mcp("calc", "peek"))).remembered, "allow");
  assert.equal((await m.judge("mcp__calc__add", mcp("calc", "add"))).remembered, undefined);
  assert.equal((await m.judge("mcp__other__peek", mcp("other", "peek"))).remembered, undefined);
});

test("grants() lists what each grant covers", async () => {
  const m = new ApprovalMemory();
  assert.deepEqual(m.grants(), []);
  await answer(m, "npm test");
  await answer(m, "rm -f a.log");
  await answer(m, "git log", "reject");
  m.remember({ kind: "paths", tool: "write_file", access: "write", paths: ["/x/a"] }, "allow");
  m.remember({ kind: "mcp", tool: "mcp__calc__peek", server: "calc", name: "peek" }, "allow");
  assert.deepEqual(m.grants(), [
    { decision: "allow", tool: "run_command", match: "prefix", covers: "npm test …" },
    { decision: "allow", tool: "run_command", match: "exact", covers: "rm -f a.log" },
    { decision: "reject", tool: "run_command", match: "prefix", covers: "git log …" },
    { decision: "allow", tool: "write_file", match: "write", covers: "/x/a" },
    { decision: "allow", tool: "mcp__calc__peek", match: "mcp_tool", covers: "peek (MCP server calc)" },
  ]);
});

test("a protected path asks in read-only and workspace-write even inside the workspace; danger-full-access never asks", () => {
  const protectedWrites = [
    "/work/proj/.git/config",
    "/work/proj/.git/hooks/pre-commit",
    "/work/proj/.husky/pre-commit",
    "/work/proj/sub/.envrc",
    "/work/proj/.GIT/config",
  ];
  for (const p of protectedWrites) {
    const w = { type: "write" as const, paths: [p] };
    assert.equal(needsApproval("workspace-write", w, roots), true, p);
    assert.equal(needsApproval("read-only", w, roots), true, p);
    assert.equal(needsApproval("danger-full-access", w, roots), false, p);
    assert.equal(protectedWrite(w, roots) !== undefined, true, p);
  }
  // The write's path as named counts too: a `.git` that is itself a link to a folder elsewhere.
  const viaLink = { type: "write" as const, paths: ["/work/proj/gitdir/config"], named: ["/work/proj/.git/config"] };
  assert.equal(protectedWrite(viaLink, roots), ".git");
  assert.equal(needsApproval("workspace-write", viaLink, roots), true);
  // Ordinary writes, and reads of protected paths, stay free.
  assert.equal(needsApproval("workspace-write", { type: "write", paths: ["/work/proj/.envrc.example"] }, roots), false);
  assert.equal(needsApproval("workspace-write", { type: "write", paths: ["/work/proj/.github/workflows/ci.yml"] }, roots), false);
  assert.equal(needsApproval("workspace-write", { type: "read", paths: ["/work/proj/.git/config"] }, roots), false);
});

test("a protected path's question says so, and its always-grant covers that one path", async () => {
  const m = new ApprovalMemory();
  const w = (p: string) => ({ type: "write" as const, paths: [p] });
  const { scope } = await m.judge("write_file", w("/work/proj/.git/config"));
  const options = permissionOptions(scope, protectedWrite(w("/work/proj/.git/config"), roots));
  const always = options.find((o) => o.kind === "allow_always")!;
  assert.equal(always.name, "Always allow write_file writing /work/proj/.git/config in this session (a protected path: .git; this path only)");
  assert.match(options.find((o) => o.kind === "reject_always")!.name, /protected path: \.git; this path only/);
  assert.match(protectedNote(".git"), /protected path: git runs commands/);
  m.remember(scope!, "allow");
  assert.equal((await m.judge("write_file", w("/work/proj/.git/config"))).remembered, "allow");
  assert.equal((await m.judge("write_file", w("/work/proj/.git/hooks/post-commit"))).remembered, undefined);
  assert.equal((await m.judge("edit_file", w("/work/proj/.git/config"))).remembered, undefined);
  // An ordinary question's options are unchanged.
  assert.equal(permissionOptions(scope).find((o) => o.kind === "allow_always")!.name, "Always allow write_file writing /work/proj/.git/config in this session");
});
