import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { fileMode, folderMode, parseUmask, shellCommand, umaskText, withUmask } from "./umask.js";

test("new files get 0666 and new folders 0777 less the umask", () => {
  assert.deepEqual([fileMode(0o022), folderMode(0o022)], [0o644, 0o755]);
  assert.deepEqual([fileMode(0o027), folderMode(0o027)], [0o640, 0o750]);
  assert.deepEqual([fileMode(0o002), folderMode(0o002)], [0o664, 0o775]);
  assert.deepEqual([fileMode(0o077), folderMode(0o077)], [0o600, 0o700]);
  assert.deepEqual([fileMode(0o111), folderMode(0o111)], [0o666, 0o666], "execute bits in a umask do not touch a file's mode");
});

test("the umask header is octal; anything else counts as not said", () => {
  assert.equal(parseUmask("0022"), 0o022);
  assert.equal(parseUmask("27"), 0o027);
  assert.equal(parseUmask("0"), 0);
  for (const bad of [undefined, "", "0o22", "8", "-22", "22 ", "07777", "1000"]) assert.equal(parseUmask(bad), undefined, String(bad));
  assert.deepEqual([umaskText(0o022), umaskText(0o7), umaskText(0o777)], ["0022", "0007", "0777"]);
});

test("the shell prefix sets the umask and execs the program with its own arguments and $0", () => {
  assert.deepEqual(withUmask(["prog", "a b", "$HOME"], 0o027), ["/bin/sh", "-c", 'umask 0027 && exec "$0" "$@"', "prog", "a b", "$HOME"]);
  const argv = withUmask(["/bin/sh", "-c", 'umask; echo "$0|$#|$1"; echo "$HOME" \'$HOME\''], 0o027);
  const out = execFileSync(argv[0]!, argv.slice(1), { env: { HOME: "/h" }, encoding: "utf8" });
  assert.equal(out, "0027\n/bin/sh|0|\n/h $HOME\n");
  const { file, args } = shellCommand("echo hi", "/", 0o022);
  assert.deepEqual([file, ...args], ["/bin/sh", "-c", 'umask 0022 && exec "$0" "$@"', "/bin/sh", "-c", "echo hi"]);
});
