/**
 * A small tmpfs the test mounts (as root) to run out of disk space on purpose. Where mounting is not
 * allowed the caller skips with the reason.
 */
import { execFileSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, rmSync, rmdirSync, writeSync } from "node:fs";
import { join } from "node:path";

export interface SmallDisk {
  dir: string;
  /** Takes every free byte; writes that need a new page fail with ENOSPC until `unfill`. */
  fill(): void;
  unfill(): void;
  unmount(): void;
}

export function mountSmallDisk(sizeMiB: number): SmallDisk | string {
  const dir = mkdtempSync("/tmp/rx-disk-");
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${sizeMiB}m,mode=0700`, "tmpfs", dir], { stdio: "pipe" });
  } catch (err) {
    rmdirSync(dir);
    return `cannot mount a tmpfs here (${(err as Error).message.split("\n")[0]})`;
  }
  const filler = join(dir, "filler");
  return {
    dir,
    fill() {
      const fd = openSync(filler, "a");
      const block = Buffer.alloc(1 << 20, 0x61);
      try {
        for (const size of [1 << 20, 4096, 1]) {
          for (;;) {
            try {
              writeSync(fd, block, 0, size);
            } catch (err) {
              if ((err as NodeJS.ErrnoException).code === "ENOSPC") break;
              throw err;
            }
          }
        }
      } finally {
        closeSync(fd);
      }
    },
    unfill() {
      rmSync(filler, { force: true });
    },
    unmount() {
      try {
        execFileSync("umount", ["-l", dir], { stdio: "pipe" });
        rmdirSync(dir);
      } catch {
        // a daemon still holding a file keeps it busy; the lazy unmount finishes when it lets go
      }
    },
  };
}
