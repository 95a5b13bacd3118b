/**
 * What a search is and what it answers, as plain data: the jobs the search worker runs
 * (builtin/search-job.ts), their results and outcomes, and what a tool calls to run one. Types
 * only, so the tools' context (types.ts) names them without importing the search's code.
 */

export interface GrepJob {
  kind: "grep";
  /** Absolute, links resolved: a folder to walk or one file. */
  root: string;
  /** Paths are shown relative to it. */
  cwd: string;
  /**
   * Real paths a file must really lie in to be read (the session's folders, and root, which the
   * permission gate judged): a link under root that leads elsewhere is skipped and counted.
   */
  inside: string[];
  /** RegExp source and flags, already known to compile. */
  source: string;
  flags: string;
  /** Only files matching this glob ("*.ts" by name anywhere, "src/**" relative to root). */
  glob?: string;
  maxResults: number;
  /** Date.now() after which the job stops and returns what it found. */
  deadline: number;
}

export interface GlobJob {
  kind: "glob";
  root: string;
  cwd: string;
  /** As GrepJob's: a link leading elsewhere is not listed. */
  inside: string[];
  /** The glob, relative to root. */
  glob: string;
  deadline: number;
}

export type SearchJob = GrepJob | GlobJob;

export interface GrepResult {
  kind: "grep";
  /** `path:line: text`, at most maxResults of them. */
  hits: string[];
  files: number;
  /** More matches exist than maxResults. */
  more: boolean;
  /** The walk's entry budget ran out. */
  incomplete: boolean;
  /** The deadline passed; what was found so far is returned. */
  timedOut: boolean;
  outside: SkippedLinks;
}

/** Links under the root that lead outside `inside`: how many, and the first few as shown. */
export interface SkippedLinks {
  count: number;
  shown: string[];
}

export interface GlobResult {
  kind: "glob";
  /** The first GLOB_MAX_RESULTS matches, sorted, as shown to the model. */
  shown: string[];
  count: number;
  incomplete: boolean;
  timedOut: boolean;
  outside: SkippedLinks;
}

export type SearchResult = GrepResult | GlobResult;

export type SearchSpec = Omit<GrepJob, "deadline"> | Omit<GlobJob, "deadline">;
export type ResultOf<S extends SearchSpec> = S extends { kind: "grep" } ? GrepResult : GlobResult;

export type SearchOutcome<R extends SearchResult = SearchResult> =
  /** `timeLimitMs` is the bound a result with `timedOut` ran into. */
  | { status: "done"; result: R; timeLimitMs: number }
  /** The job threw, e.g. ENOENT for its root; `error.code` is kept for fsErrorMessage. */
  | { status: "failed"; error: Error & { code?: string } }
  /** No progress for `boundMs`; `matching` tells a stuck pattern from stuck file reads. */
  | { status: "stalled"; matching: boolean; boundMs: number }
  | { status: "cancelled" }
  | { status: "crashed"; message: string };

/** What a tool needs of its daemon's search threads (builtin/search-thread.ts's SearchThreads). */
export interface SearchRunner {
  run<S extends SearchSpec>(spec: S, opts: { signal: AbortSignal; stallMs?: number; totalMs?: number }): Promise<SearchOutcome<ResultOf<S>>>;
}

/** A daemon's search threads as the daemon sees them: runs searches, counts those running, ends. */
export interface SearchThreadsView extends SearchRunner {
  readonly running: number;
  /** Ends the thread kept between searches; the daemon is stopping. */
  close(): void;
}
