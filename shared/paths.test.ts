import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { chmodSync, chownSync, lstatSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { ensurePrivateDir, homeProblem, resolvePaths, shortSocketPath, SOCKET_PATH_MAX, socketTrustProblem, UntrustedPathError } from "./paths.js";

const uid = process.getuid!();
const NOBODY = 65534;

function scratch(t: { after(fn: () => void): void }): string {
  const dir = mkdtempSync("/tmp/rx-paths-");
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function refusal(fn: () => void): string {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof UntrustedPathError, `expected UntrustedPathError, got ${String(err)}`);
    return err.message;
  }
  assert.fail("expected a refusal");
}

test("ensurePrivateDir creates the folder 0700 (and its missing parents), and accepts it again", (t) => {
  const base = scratch(t);
  const dir = join(base, "home", "run");
  ensurePrivateDir(dir);
  const st = lstatSync(dir);
  assert.ok(st.isDirectory());
  assert.equal(st.mode & 0o777, 0o700);
  assert.equal(st.uid, uid);
  ensurePrivateDir(dir);
});

test("ensurePrivateDir refuses a link, even one to a good folder, and never follows it", (t) => {
  const base = scratch(t);
  const real = join(base, "real");
  mkdirSync(real, { mode: 0o700 });
  const link = join(base, "run");
  symlinkSync(real, link);
  assert.equal(
    refusal(() => ensurePrivateDir(link)),
    `refusing ${link}: it is a symbolic link`,
  );
  // A dangling link is refused too, and nothing is created where it points.
  const dangling = join(base, "dangling");
  symlinkSync(join(base, "nowhere"), dangling);
  assert.match(
    refusal(() => ensurePrivateDir(dangling)),
    /symbolic link/,
  );
  assert.throws(() => lstatSync(join(base, "nowhere")), /ENOENT/);
});

test("ensurePrivateDir refuses another user's folder and one open to group or others", (t) => {
  const base = scratch(t);
  const theirs = join(base, "theirs");
  mkdirSync(theirs, { mode: 0o700 });
  chownSync(theirs, NOBODY, NOBODY);
  assert.equal(
    refusal(() => ensurePrivateDir(theirs)),
    `refusing ${theirs}: it belongs to another user (uid ${NOBODY})`,
  );

  const open = join(base, "open");
  mkdirSync(open, { mode: 0o700 });
  chmodSync(open, 0o750);
  assert.equal(
    refusal(() => ensurePrivateDir(open)),
    `refusing ${open}: it is open to group or others (mode 750)`,
  );
  chmodSync(open, 0o701);
  assert.match(
    refusal(() => ensurePrivateDir(open)),
    /open to group or others \(mode 701\)/,
  );

  const file = join(base, "file");
  writeFileSync(file, "");
  assert.equal(
    refusal(() => ensurePrivateDir(file)),
    `refusing ${file}: it is not a folder`,
  );
});

test("socketTrustProblem: a missing folder or socket is fine; a bad folder, a non-socket or a foreign socket is not", async (t) => {
  const base = scratch(t);
  const socketDir = join(base, "run");
  const socketPath = join(socketDir, "daemon.sock");
  assert.equal(socketTrustProblem({ socketDir, socketPath }), undefined);
  mkdirSync(socketDir, { mode: 0o700 });
  assert.equal(socketTrustProblem({ socketDir, socketPath }), undefined);

  writeFileSync(socketPath, "");
  assert.equal(socketTrustProblem({ socketDir, socketPath }), `refusing ${socketPath}: it is not a socket`);
  rmSync(socketPath);

  const server = createServer();
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  t.after(() => server.close());
  assert.equal(socketTrustProblem({ socketDir, socketPath }), undefined);
  chownSync(socketPath, NOBODY, NOBODY);
  assert.equal(socketTrustProblem({ socketDir, socketPath }), `refusing ${socketPath}: it belongs to another user (uid ${NOBODY})`);
  chownSync(socketPath, uid, uid);

  chmodSync(socketDir, 0o755);
  assert.match(socketTrustProblem({ socketDir, socketPath }) ?? "", /open to group or others/);
  chmodSync(socketDir, 0o700);
  chownSync(socketDir, NOBODY, NOBODY);
  assert.equal(socketTrustProblem({ socketDir, socketPath }), `refusing ${socketDir}: it belongs to another user (uid ${NOBODY})`);
});

test("a short home keeps run/daemon.sock; a long one gets a short private path named by its hash", () => {
  const short = resolvePaths({ REASONIX_HOME: "/tmp/rx-home" });
  assert.equal(short.socketPath, "/tmp/rx-home/run/daemon.sock");
  assert.equal(short.socketDir, "/tmp/rx-home/run");

  const home = `/tmp/${"h".repeat(120)}`;
  const hash = createHash("sha256").update(home).digest("hex").slice(0, 16);
  const long = resolvePaths({ REASONIX_HOME: home });
  assert.equal(long.socketPath, `/tmp/reasonix-${uid}/${hash}.sock`);
  assert.equal(long.socketDir, `/tmp/reasonix-${uid}`);
  // daemon.json and everything else stay in the home.
  assert.equal(long.daemonInfoFile, `${home}/run/daemon.json`);
  assert.equal(long.runtimeDir, `${home}/run`);
  assert.equal(long.dbDir, `${home}/db`);

  const xdg = resolvePaths({ REASONIX_HOME: home, XDG_RUNTIME_DIR: "/run/user/1000" });
  assert.equal(xdg.socketPath, `/run/user/1000/reasonix/${hash}.sock`);
  // An XDG_RUNTIME_DIR too long for the socket falls back to /tmp.
  assert.equal(resolvePaths({ REASONIX_HOME: home, XDG_RUNTIME_DIR: `/run/${"x".repeat(100)}` }).socketPath, `/tmp/reasonix-${uid}/${hash}.sock`);
});

test("the limit counts bytes, not characters; exactly at the limit still fits", () => {
  const fixed = "/tmp//run/daemon.sock".length;
  const fits = `/tmp/${"a".repeat(SOCKET_PATH_MAX - fixed)}`;
  assert.equal(resolvePaths({ REASONIX_HOME: fits }).socketPath, `${fits}/run/daemon.sock`);
  assert.equal(Buffer.byteLength(`${fits}/run/daemon.sock`), SOCKET_PATH_MAX);
  // The same number of characters, but one of them two bytes long: over the limit.
  const wide = `/tmp/é${"a".repeat(SOCKET_PATH_MAX - fixed - 1)}`;
  assert.equal(`${wide}/run/daemon.sock`.length, SOCKET_PATH_MAX);
  assert.notEqual(resolvePaths({ REASONIX_HOME: wide }).socketPath, `${wide}/run/daemon.sock`);
});

test("two long homes that share their first 107 bytes get different sockets; the hash is of the absolute path", () => {
  const prefix = `/tmp/${"p".repeat(120)}`;
  const a = resolvePaths({ REASONIX_HOME: `${prefix}/one` }).socketPath;
  const b = resolvePaths({ REASONIX_HOME: `${prefix}/two` }).socketPath;
  assert.notEqual(a, b);
  assert.ok(Buffer.byteLength(a) <= SOCKET_PATH_MAX);
  // A relative home is made absolute first, so the daemon and a shim in another folder agree.
  const cwd = process.cwd();
  const relative = "r".repeat(120);
  assert.equal(resolvePaths({ REASONIX_HOME: relative }).home, join(cwd, relative));
  assert.equal(shortSocketPath(relative, {}), shortSocketPath(join(cwd, relative), {}));
});

test("homeProblem names a REASONIX_HOME that is a file", (t) => {
  const base = scratch(t);
  const file = join(base, "file");
  writeFileSync(file, "x");
  assert.equal(homeProblem({ home: file }), `REASONIX_HOME ${file} is not a folder`);
  assert.match(homeProblem({ home: join(file, "below") }) ?? "", /is not a folder \(a part of its path is a file\)/);
  assert.equal(homeProblem({ home: join(base, "not-yet") }), undefined);
  assert.equal(homeProblem({ home: base }), undefined);
  assert.equal(homeProblem({ home: undefined }), undefined);
});
