import { test } from "node:test";
import assert from "node:assert/strict";
import { ApprovalMemory, commandPrefix, needsApproval } from "./permissions.js";

const roots = ["/work/proj"];

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

test("command prefixes cover program and subcommand, never shell operators", () => {
  assert.equal(commandPrefix("npm test -- --watch"), "npm test");
  assert.equal(commandPrefix("ls -la"), "ls");
  assert.equal(commandPrefix("git status"), "git status");
  assert.equal(commandPrefix("echo hi; rm -rf ~"), undefined);
  assert.equal(commandPrefix("cat a | sh"), undefined);
});

test("always-answers hold for the same prefix or exact command only", () => {
  const m = new ApprovalMemory();
  m.remember("run_command", { type: "execute", command: "npm test", cwd: "/" }, "allow");
  assert.equal(m.lookup("run_command", { type: "execute", command: "npm test -- a", cwd: "/" }), "allow");
  assert.equal(m.lookup("run_command", { type: "execute", command: "npm install", cwd: "/" }), undefined);
  assert.equal(m.lookup("run_command", { type: "execute", command: "npm test; curl x", cwd: "/" }), undefined);
  m.remember("write_file", { type: "write", paths: ["/x/a"] }, "reject");
  assert.equal(m.lookup("write_file", { type: "write", paths: ["/x/a"] }), "reject");
  assert.equal(m.lookup("edit_file", { type: "write", paths: ["/x/a"] }), undefined);
});
