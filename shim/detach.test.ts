import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { findSetsid, spawnDetached, type DetachStrategy } from "./detach.js";

/** pid, ppid, pgrp and session of a process, from /proc/<pid>/stat (fields 1, 4, 5, 6). */
function procStat(pid: number): { ppid: number; pgrp: number; sid: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return { ppid: Number(rest[1]), pgrp: Number(rest[2]), sid: Number(rest[3]) };
}

/** Everything the target said on fd 3 until EOF. */
function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    stream.setEncoding("utf8");
    stream.on("data", (c: string) => (text += c));
    stream.on("end", () => resolve(text));
    stream.on("error", reject);
  });
}

/**
 * The launcher unrefs the detached child (a shim must be free to exit), so while a test waits for
 * the intermediate's exit or fd 3's EOF nothing else may hold the event loop: a ref'd timer does.
 */
async function held<T>(p: Promise<T>): Promise<T> {
  const keep = setInterval(() => {}, 1000);
  try {
    return await p;
  } finally {
    clearInterval(keep);
  }
}

// The target says its pid on fd 3, closes it, and stays until killed.
const TARGET = 'const fs=require("fs");fs.writeSync(3,process.pid+"\\n");fs.closeSync(3);setInterval(()=>{},1e6)';

const strategies: DetachStrategy[] = findSetsid() ? ["setsid", "node"] : ["node"];

for (const strategy of strategies) {
  test(`${strategy}: the target leads its own session and group, is not our child, and still gets fd 3`, async (t) => {
    const child = await spawnDetached([process.execPath, "-e", TARGET], { stdio: ["ignore", "ignore", "ignore", "pipe"], env: process.env, strategy });
    const intermediateExit = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    const said = await held(readAll(child.stdio[3] as NodeJS.ReadableStream));
    const pid = Number(said.trim());
    assert.ok(Number.isInteger(pid) && pid > 0, `target said ${JSON.stringify(said)}`);
    t.after(() => process.kill(pid, "SIGKILL"));
    assert.equal(await held(intermediateExit), 0, "the intermediate exits at once, successfully");
    const st = procStat(pid);
    assert.notEqual(st.ppid, process.pid, "re-parented away from the launcher");
    assert.notEqual(st.ppid, child.pid, "not the intermediate's child either");
    assert.equal(st.sid, pid, "session leader");
    assert.equal(st.pgrp, pid, "its own process group");
  });

  test(`${strategy}: a target that dies without a word shows as EOF on fd 3`, async () => {
    const child = await spawnDetached([process.execPath, "-e", "process.exit(3)"], {
      stdio: ["ignore", "ignore", "ignore", "pipe"],
      env: process.env,
      strategy,
    });
    assert.equal(await held(readAll(child.stdio[3] as NodeJS.ReadableStream)), "");
  });
}
