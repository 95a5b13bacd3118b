/**
 * Which simple commands no prefix grant may ever cover (DESIGN §6): those that destroy or overwrite
 * data, change permissions or ownership, stop processes or the machine, publish, or run other
 * programs or code handed to them (where the program that really runs is out of sight of any
 * prefix). They are granted, and covered, only by their exact text.
 */

/** Destructive whatever their arguments. */
const DESTRUCTIVE = new Set([
  "rm",
  "rmdir",
  "unlink",
  "shred",
  "wipe",
  "srm",
  "dd",
  "truncate",
  "mkswap",
  "wipefs",
  "fdisk",
  "sfdisk",
  "gdisk",
  "parted",
  // mv and cp replace whatever the target was; ln -f and install as well.
  "mv",
  "cp",
  "ln",
  "install",
  "rsync",
  "chmod",
  "chown",
  "chgrp",
  "chattr",
  "setfacl",
  "kill",
  "killall",
  "pkill",
  "reboot",
  "shutdown",
  "halt",
  "poweroff",
  "crontab",
  "sudo",
  "su",
  "doas",
  "pkexec",
]);

/** Run another program or code given in their arguments or on standard input. */
const RUNNERS = new Set([
  "sh",
  "bash",
  "zsh",
  "dash",
  "ksh",
  "mksh",
  "fish",
  "csh",
  "tcsh",
  "busybox",
  "env",
  "xargs",
  "exec",
  "eval",
  "command",
  "builtin",
  "source",
  ".",
  "nohup",
  "nice",
  "ionice",
  "timeout",
  "time",
  "stdbuf",
  "setsid",
  "chroot",
  "unshare",
  "nsenter",
  "watch",
  "strace",
  "ltrace",
  "flock",
  "script",
  "parallel",
  "ssh",
  "python",
  "node",
  "perl",
  "ruby",
  "php",
  "lua",
  "tclsh",
  "osascript",
  "awk",
  "gawk",
  "mawk",
]);

const GIT_DESTRUCTIVE = new Set([
  "push",
  "reset",
  "clean",
  "checkout",
  "restore",
  "rm",
  "rebase",
  "filter-branch",
  "filter-repo",
  "update-ref",
  "reflog",
  "gc",
  "prune",
  "am",
  // Settings and hooks that later run code (core.sshCommand, aliases with `!`).
  "config",
  "submodule",
]);

/** git subcommands destructive only with some arguments. */
const GIT_WITH: Record<string, (args: string[]) => boolean> = {
  branch: (a) => a.some((x) => /^(-[a-zA-Z]*[dDmMfC]|--delete|--force|--move|--copy)/.test(x)),
  tag: (a) => a.some((x) => /^(-[a-zA-Z]*[df]|--delete|--force)/.test(x)),
  stash: (a) => a[0] === "drop" || a[0] === "clear",
  switch: (a) => a.some((x) => /^(-[a-zA-Z]*[fC]|--force|--discard-changes|--force-create)/.test(x)),
  worktree: (a) => a[0] === "remove" || a[0] === "prune",
  remote: (a) => a[0] === "remove" || a[0] === "rm" || a[0] === "set-url",
  bisect: (a) => a[0] === "run",
};

/** git's options that take their value as the next word. */
const GIT_VALUE_OPTIONS = new Set(["-c", "-C", "--git-dir", "--work-tree", "--namespace", "--config-env", "--super-prefix"]);

const PACKAGE_MANAGERS = new Set(["npm", "pnpm", "yarn", "bun"]);
const CONTAINERS = new Set(["docker", "podman", "nerdctl"]);

/** The program's name as the lists spell it: `/usr/bin/python3.12` is python, `mkfs.ext4` is mkfs. */
export function programName(program: string): string {
  const base = program.slice(program.lastIndexOf("/") + 1);
  if (base.startsWith("mkfs")) return "mkfs";
  return base.replace(/^(python|pip|node|perl|ruby|php|lua)[\d.]*$/, "$1");
}

/** Destructive: see the module comment. */
export function isDestructive(argv: readonly string[]): boolean {
  const name = programName(argv[0] ?? "");
  if (DESTRUCTIVE.has(name) || name === "mkfs") return true;
  const args = argv.slice(1);
  if (name === "git") {
    const i = gitSubcommandIndex(args);
    if (i === undefined) return false;
    const sub = args[i]!;
    return GIT_DESTRUCTIVE.has(sub) || (GIT_WITH[sub]?.(args.slice(i + 1)) ?? false);
  }
  if (name === "find") return args.some((a) => /^-(delete|exec|execdir|ok|okdir|fprint0?|fprintf|fls)$/.test(a));
  if (PACKAGE_MANAGERS.has(name)) return args.some((a) => a === "publish" || a === "unpublish");
  if (CONTAINERS.has(name)) return args.slice(0, 3).some((a) => a === "rm" || a === "rmi" || a === "prune" || a === "kill");
  if (name === "kubectl") return args.slice(0, 2).some((a) => a === "delete" || a === "drain");
  if (name === "terraform" || name === "tofu") return args.slice(0, 2).some((a) => a === "destroy" || a === "apply");
  return false;
}

/** Runs other programs or code: see the module comment. */
export function runsOtherCode(argv: readonly string[]): boolean {
  return RUNNERS.has(programName(argv[0] ?? ""));
}

function gitSubcommandIndex(args: readonly string[]): number | undefined {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (!a.startsWith("-")) return i;
    if (GIT_VALUE_OPTIONS.has(a)) i++;
  }
  return undefined;
}
