import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { carriesMark, markedPids, newRunId, runMarkArgs, sweepRun } from "./run-sweep.js";
import { probeSandbox } from "./sandbox-probe.js";

const status = await probeSandbox(process.env.PATH);
const skip = status.available ? false : `no sandbox here: ${status.reason}`;

const line = (...argv: string[]): string => `${argv.join("\0")}\0`;

/** Live processes whose command line holds `word` (the sleeps inside a sandbox carry no mark). */
function withWord(word: string): number[] {
  return readdirSync("/proc")
    .filter((e) => /^\d+$/.test(e) && Number(e) !== process.pid)
    .filter((e) => {
      try {
        return readFileSync(`/proc/${e}/cmdline`, "utf8").includes(word) && alive(Number(e));
      } catch {
        return false;
      }
    })
    .map(Number);
}

function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat[stat.lastIndexOf(")") + 2] !== "Z";
  } catch {
    return false;
  }
}

test("a run's mark is found among bwrap's own options only, and only its exact id", () => {
  const id = newRunId();
  assert.match(id, /^[0-9a-f]{24}$/);
  assert.notEqual(newRunId(), id);
  const marked = line("/usr/bin/bwrap", "--die-with-parent", ...runMarkArgs(id), "--chdir", "/w", "--", "/bin/sh", "-c", "true");
  assert.equal(carriesMark(marked, id), true);
  assert.equal(carriesMark(marked, newRunId()), false, "another run's id");
  assert.equal(carriesMark(marked, id.slice(0, -1)), false, "a prefix of the id");
  // The command's own words (after `--`) never count: a command naming an id is not that run.
  assert.equal(carriesMark(line("/usr/bin/bwrap", "--", "/bin/sh", ...runMarkArgs(id)), id), false);
  assert.equal(carriesMark(line("grep", `REASONIX_RUN_${id}`), id), false);
  assert.equal(carriesMark("", id), false, "a zombie's empty command line");
});

test("the sweep kills the run's sandbox, everything inside it with it, and nothing of another run", { skip }, async (t) => {
  const bwrap = status.available ? status.bwrap : "bwrap";
  const word = `${process.pid}${Date.now() % 10_000}`;
  const start = (id: string, seconds: string) =>
    spawn(
      bwrap,
      [
        "--die-with-parent",
        "--unshare-pid",
        "--new-session",
        ...runMarkArgs(id),
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--",
        "/bin/sh",
        "-c",
        `sleep ${seconds}.${word}`,
      ],
      { detached: true, stdio: "ignore" },
    );
  const mine = newRunId();
  const other = newRunId();
  const a = start(mine, "31");
  const b = start(other, "32");
  t.after(() => {
    b.kill("SIGKILL");
    void sweepRun(other);
  });
  // Both sandboxes up: an outer and an inner bwrap each, their sleeps inside. The outer bwrap's own
  // command line holds the word from its spawn on, so the word alone does not say the inside is up.
  const up = (id: string, seconds: string) => markedPids(id).length >= 2 && withWord(`sleep ${seconds}.${word}`).length >= 3;
  for (let i = 0; i < 300 && !(up(mine, "31") && up(other, "32")); i++) await sleep(10);
  const inner = markedPids(mine).find((p) => p !== a.pid)!;
  assert.ok(inner, "the inner bwrap carries the mark of its clone");
  assert.ok(alive(b.pid!));

  assert.ok((await sweepRun(mine)) >= 2);
  assert.deepEqual(markedPids(mine), []);
  assert.equal(alive(inner), false);
  assert.deepEqual(withWord(`sleep 31.${word}`), [], "the command inside ended with its pid namespace");
  assert.equal(alive(b.pid!), true, "another run's sandbox is untouched");
  assert.ok(withWord(`sleep 32.${word}`).length > 0);
  assert.equal(await sweepRun(newRunId()), 0, "a run with nothing left signals nothing");
});
