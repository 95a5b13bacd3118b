/**
 * Background jobs in the store, so none outlives a daemon that died: a running job is recorded
 * (`job!<sessionId>!<jobId>`: its process group, the start time the kernel gives its leader, its
 * command) and forgotten when it ends. A daemon that starts ends the groups of the jobs still
 * recorded, but only when the leader is the very process recorded (same pid, same start time), never
 * a process that reused the id.
 */
import { readFileSync } from "node:fs";
import type { Logger } from "../log/log.js";
import type { Store } from "../store/store.js";
import { keyspace } from "../store/keyspace.js";
import { groupAlive, type JobHooks } from "../tools/jobs.js";
import { killGroup } from "../tools/local-commands.js";

export const jobKeys = {
  job: (sessionId: string, jobId: string) => keyspace.job.key(sessionId, jobId),
  sessionPrefix: (sessionId: string) => keyspace.job.range(sessionId),
  prefix: keyspace.job.range(),
};

interface JobRecord {
  pid: number;
  startTime: string;
  command: string;
}

/** Field 22 of /proc/<pid>/stat: when the process started, in clock ticks since boot. */
export function startTimeOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
  } catch {
    return undefined;
  }
}

export function jobHooks(store: Store, sessionId: string, log: Logger): JobHooks {
  const failed = (err: unknown): void => log.warn({ err }, "recording a background job failed");
  return {
    started: (job) => {
      const startTime = job.pid !== undefined ? startTimeOf(job.pid) : undefined;
      if (job.pid === undefined || startTime === undefined) return;
      const record: JobRecord = { pid: job.pid, startTime, command: job.command };
      store.batch([{ type: "put", key: jobKeys.job(sessionId, job.jobId), value: record }], true).catch(failed);
    },
    ended: (job) => {
      store.batch([{ type: "del", key: jobKeys.job(sessionId, job.jobId) }], false).catch(failed);
    },
  };
}

/** At start: the jobs a dead daemon left running are ended; returns how many were. */
export async function endOrphanedJobs(store: Store, log: Logger): Promise<number> {
  let ended = 0;
  for (const { key, value } of await store.range<JobRecord>(jobKeys.prefix)) {
    if (startTimeOf(value.pid) === value.startTime && groupAlive(value.pid)) {
      killGroup(value.pid, "SIGKILL");
      ended++;
      log.info({ pid: value.pid, command: value.command }, "ended a background job left by a daemon that stopped without ending it");
    }
    await store.batch([{ type: "del", key }], false);
  }
  return ended;
}
