/**
 * The work of grep and glob over a folder: walk, read, match, format. It runs inside the search
 * worker (search-worker.ts), never on the daemon's event loop, because a model-written pattern can
 * take exponential time and a large tree takes long to read. Plain data in, plain data out, so it
 * crosses the thread boundary as is.
 */
import { closeSync, constants, fstatSync, openSync, readFileSync, realpathSync } from "node:fs";
import { basename, relative } from "node:path";
import { decodeBytes, looksBinary } from "../local-files.js";
import { openedPath } from "../read-head.js";
import { displayPath, isInside } from "../workspace.js";
import { clip, toPosix } from "./common.js";
import { globToRegExp } from "./glob-match.js";
import { noteOutside, walkFiles, walkState, type WalkState } from "./walk.js";
import type { GlobJob, GlobResult, GrepJob, GrepResult, SearchJob, SearchResult, SkippedLinks } from "../search-types.js";

export const GREP_MAX_LINE_CHARS = 300;
export const GREP_MAX_FILE_BYTES = 2 * 1024 * 1024;
export const GLOB_MAX_RESULTS = 1000;

/**
 * Where the job is, for the watchdog on the daemon's side: slot TICKS moves after every line and
 * every file, and slot MATCHING is 1 while a pattern runs. A counter in shared memory costs the
 * job nothing and the event loop no messages; a stuck regex shows as a counter that stops. Slot
 * THREAD holds the thread's Linux task id (0 where unknown), so the watchdog can tell a thread
 * waiting for a CPU from one that got it and made no progress.
 */
export const TICKS = 0;
export const MATCHING = 1;
export const THREAD = 2;
export const PROGRESS_SLOTS = 3;

/** A filter without "/" matches file names anywhere ("*.ts"), as in ripgrep's --glob. */
export function fileFilter(glob: string | undefined): ((root: string, file: string) => boolean) | undefined {
  if (!glob) return undefined;
  const re = globToRegExp(glob);
  return glob.includes("/") ? (root, file) => re.test(toPosix(relative(root, file))) : (_root, file) => re.test(basename(file));
}

export function runSearchJob(job: SearchJob, progress: Int32Array): SearchResult {
  return job.kind === "grep" ? grep(job, progress) : glob(job, progress);
}

function tick(progress: Int32Array): void {
  Atomics.add(progress, TICKS, 1);
}

function matching(progress: Int32Array, on: boolean): void {
  Atomics.store(progress, MATCHING, on ? 1 : 0);
}

/** The overall bound of one search: each step reports progress and checks the clock. */
function overallDeadline(deadline: number, progress: Int32Array) {
  const clock = {
    timedOut: false,
    expired(): boolean {
      if (Date.now() > deadline) clock.timedOut = true;
      return clock.timedOut;
    },
    goOn(): boolean {
      tick(progress);
      return !clock.expired();
    },
  };
  return clock;
}

function skippedLinks(state: WalkState, cwd: string): SkippedLinks {
  return { count: state.outside.count, shown: state.outside.paths.map((p) => displayPath(cwd, p)).sort() };
}

function grep(job: GrepJob, progress: Int32Array): GrepResult {
  const re = new RegExp(job.source, job.flags);
  const filter = fileFilter(job.glob);
  const hits: string[] = [];
  const files = new Set<string>();
  const state = walkState();
  let more = false;
  const clock = overallDeadline(job.deadline, progress);
  for (const file of walkFiles(job.root, { goOn: clock.goOn, inside: job.inside }, state)) {
    if (more || !clock.goOn()) break;
    if (filter && !filter(job.root, file)) continue;
    const lines = readText(file, job.inside, state);
    if (!lines) continue;
    const shown = displayPath(job.cwd, file);
    matching(progress, true);
    for (let i = 0; i < lines.length; i++) {
      const hit = re.test(lines[i]!);
      tick(progress);
      if ((i & 1023) === 1023 && clock.expired()) break;
      if (!hit) continue;
      if (hits.length >= job.maxResults) {
        more = true;
        break;
      }
      hits.push(`${shown}:${i + 1}: ${clip(lines[i]!.replace(/\r$/, ""), GREP_MAX_LINE_CHARS)}`);
      files.add(file);
    }
    matching(progress, false);
    if (clock.timedOut) break;
  }
  return { kind: "grep", hits, files: files.size, more, incomplete: state.incomplete, timedOut: clock.timedOut, outside: skippedLinks(state, job.cwd) };
}

/**
 * A searchable file's lines, or undefined for files grep skips (huge, binary, unreadable, not a
 * regular file, or really outside `inside`, which is counted in `state`).
 */
function readText(file: string, inside: readonly string[], state: WalkState): string[] | undefined {
  let fd: number;
  try {
    // Non-blocking: a path given to grep itself is not filtered by the walk, and opening a FIFO
    // would wait for a writer. Nothing is read before the checks on the open file below.
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch {
    // Unreadable files (permissions, vanished mid-walk) are simply not searched.
    return undefined;
  }
  try {
    const st = fstatSync(fd);
    // A device such as /dev/zero would never end the read.
    if (!st.isFile() || st.size > GREP_MAX_FILE_BYTES) return undefined;
    // The file opened, not the path walked: a link put in place since the walk looked is caught here.
    if (!isInside(openedPath(fd) ?? realpathSync(file), inside)) {
      noteOutside(state, file);
      return undefined;
    }
    const bytes = readFileSync(fd);
    if (looksBinary(bytes)) return undefined;
    return decodeBytes(bytes).text.split("\n");
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

function glob(job: GlobJob, progress: Int32Array): GlobResult {
  const re = globToRegExp(job.glob);
  const found: string[] = [];
  const state = walkState();
  const clock = overallDeadline(job.deadline, progress);
  for (const file of walkFiles(job.root, { goOn: clock.goOn, inside: job.inside }, state)) {
    matching(progress, true);
    const hit = re.test(toPosix(relative(job.root, file)));
    matching(progress, false);
    tick(progress);
    if (hit) found.push(file);
  }
  found.sort();
  return {
    kind: "glob",
    shown: found.slice(0, GLOB_MAX_RESULTS).map((f) => displayPath(job.cwd, f)),
    count: found.length,
    incomplete: state.incomplete,
    timedOut: clock.timedOut,
    outside: skippedLinks(state, job.cwd),
  };
}
