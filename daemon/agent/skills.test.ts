import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { discoverSkills, MAX_SKILL_BODY_BYTES, MAX_SKILL_ENTRIES, MAX_SKILLS, readSkillBody } from "./skills.js";

/** A repository (a `.git` folder), a config folder and a home, each empty, removed after the test. */
function place(t: { after(fn: () => void): void }) {
  const base = realpathSync(mkdtempSync(join(tmpdir(), "rx-skills-")));
  t.after(() => rmSync(base, { recursive: true, force: true }));
  const repo = join(base, "repo");
  const config = join(base, "config");
  const home = join(base, "home");
  for (const d of [join(repo, ".git"), config, home]) mkdirSync(d, { recursive: true });
  return { base, repo, config, home, at: { cwd: repo, additionalDirectories: [] } };
}

function skill(dir: string, name: string, body = "body\n"): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "SKILL.md"), `---\nname: ${name}\ndescription: The ${name} skill\n---\n${body}`);
}

test("a folder of 300 skills is read 256 entries far and lists 100, each bound said", async (t) => {
  const p = place(t);
  const dir = join(p.repo, ".agents", "skills");
  for (let i = 0; i < 300; i++) skill(join(dir, `s${String(i).padStart(3, "0")}`), `s${String(i).padStart(3, "0")}`);
  const set = await discoverSkills(p.at, p.config, p.home);
  assert.equal(set.skills.length, MAX_SKILLS);
  // Which 256 entries come first is the file system's order (ext4 hashes names, tmpfs lists the newest
  // first); the listing is the first of those by name, sorted, each a skill that was made.
  const names = set.skills.map((s) => s.name);
  assert.deepEqual(names, [...new Set(names)].sort());
  assert.ok(
    names.every((n) => /^s\d{3}$/.test(n) && Number(n.slice(1)) < 300),
    names.join(" "),
  );
  assert.deepEqual(set.notices, [
    `Only the first ${MAX_SKILL_ENTRIES} entries of ${dir} were looked at for skills.`,
    `${MAX_SKILL_ENTRIES - MAX_SKILLS} more skills not listed: at most ${MAX_SKILLS} are.`,
  ]);
});

test("a 1 GB SKILL.md is read 128 KiB far; front matter past the first 8 KiB, or a SKILL.md linking to /proc, is skipped", async (t) => {
  const p = place(t);
  const dir = join(p.repo, ".claude", "skills");
  skill(join(dir, "huge"), "huge", "x".repeat(1024));
  truncateSync(join(dir, "huge", "SKILL.md"), 1024 ** 3);
  mkdirSync(join(dir, "late"));
  writeFileSync(join(dir, "late", "SKILL.md"), `---\n${"# pad\n".repeat(2000)}name: late\ndescription: late\n---\n`);
  mkdirSync(join(dir, "environ"));
  symlinkSync("/proc/self/environ", join(dir, "environ", "SKILL.md"));

  const set = await discoverSkills(p.at, p.config, p.home);
  assert.deepEqual(
    set.skills.map((s) => s.name),
    ["huge"],
  );
  assert.equal(set.notices.length, 2);
  assert.match(
    set.notices[0]!,
    /^Skipped \.claude\/skills\/environ\/SKILL\.md: it links outside the repository and the session's folders \(to \/proc\/\d+\/environ\)\.$/,
  );
  assert.match(set.notices[1]!, /^Skipped \.claude\/skills\/late\/SKILL\.md: it has no front matter .* within its first 8 KiB\.$/);

  const read = await readSkillBody(p.at, p.config, "huge", p.home);
  assert.ok(!("error" in read));
  assert.equal(read.clipped, true);
  assert.ok(Buffer.byteLength(read.body) <= MAX_SKILL_BODY_BYTES);
});

test("the user's folders come after the project's; ~/.agents/skills is read, a link out of ~/.agents is not; a folder's links out are not listed", async (t) => {
  const p = place(t);
  skill(join(p.repo, ".agents", "skills", "review"), "review");
  skill(join(p.config, "skills", "review"), "review");
  skill(join(p.home, ".agents", "skills", "deploy"), "deploy");
  skill(join(p.home, "elsewhere", "secret"), "secret");
  symlinkSync(join(p.home, "elsewhere", "secret"), join(p.home, ".agents", "skills", "secret"));
  writeFileSync(join(p.home, "key"), "KEY\n");
  writeFileSync(join(p.repo, ".agents", "skills", "review", "checklist.md"), "- tests\n");
  symlinkSync(join(p.home, "key"), join(p.repo, ".agents", "skills", "review", "key"));
  symlinkSync("checklist.md", join(p.repo, ".agents", "skills", "review", "list.md"));

  const set = await discoverSkills(p.at, p.config, p.home);
  assert.deepEqual(
    set.skills.map((s) => [s.name, s.shown]),
    [
      ["deploy", join(p.home, ".agents", "skills", "deploy")],
      ["review", join(".agents", "skills", "review")],
    ],
  );
  assert.deepEqual(set.hidden, [{ name: "review", shown: join(p.config, "skills", "review"), by: join(".agents", "skills", "review") }]);
  assert.deepEqual(set.notices, [
    `Skipped ${join(p.home, ".agents", "skills", "secret", "SKILL.md")}: it links outside ~/.agents (to ${join(p.home, "elsewhere", "secret", "SKILL.md")}).`,
  ]);
  const read = await readSkillBody(p.at, p.config, "review", p.home);
  assert.ok(!("error" in read));
  assert.deepEqual(read.files, ["checklist.md", "list.md"]);
  assert.equal(read.body, "body");
});
