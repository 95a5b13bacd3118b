import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import iconv from "iconv-lite";
import { world, test } from "./fixture.js";
import type { ScriptedModel } from "../support/scripted-model.js";

/** What the model read back for each tool call, in order, as the last request carried it. */
function toolResults(model: ScriptedModel): string[] {
  return model.requests
    .at(-1)!
    .body.messages.filter((m: { role: string }) => m.role === "tool")
    .map((m: { content: string }) => m.content);
}

test("multi_edit is all or nothing and names the failed edit; an edit off by indentation lands with a note", async (t) => {
  const { agent, model, workdir } = await world(t);
  const src = "def main():\n    total = 0\n    for x in items:\n        total += x\n    return total\n";
  writeFileSync(join(workdir, "calc.py"), src);
  model.enqueue(
    {
      toolCalls: [
        {
          name: "multi_edit",
          arguments: {
            path: "calc.py",
            edits: [
              { oldText: "total = 0", newText: "total = 1" },
              { oldText: "for y in items:", newText: "for y in things:" },
              { oldText: "return total", newText: "return total * 2" },
            ],
          },
        },
      ],
    },
    {
      toolCalls: [
        {
          name: "multi_edit",
          arguments: {
            path: "calc.py",
            edits: [
              { oldText: "total = 0", newText: "total = 1" },
              // The model dropped the file's indentation: four spaces written as none, eight as four.
              { oldText: "for x in items:\n    total += x\n", newText: "for x in items:\n    if x > 0:\n        total += x\n" },
            ],
          },
        },
      ],
    },
    { content: ["done"] },
  );
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  await agent.prompt(sessionId, "fix calc");

  const [failed, landed] = toolResults(model);
  assert.match(failed!, /^Edit 2 of 3 failed in calc\.py: oldText not found.*nearest candidate is at line 3:\n {4}3\t {4}for x in items:/s);
  assert.match(failed!, /Nothing was changed\.$/);
  assert.match(landed!, /^Applied 2 edits to calc\.py\.\nEdit 2 of 2: oldText matched only when whitespace was ignored \(line 3\); newText was re-indented/);
  assert.equal(
    readFileSync(join(workdir, "calc.py"), "utf8"),
    "def main():\n    total = 1\n    for x in items:\n        if x > 0:\n            total += x\n    return total\n",
  );
  const statuses = agent
    .updatesFor(sessionId)
    .filter((u) => u.sessionUpdate === "tool_call_update" && (u.status === "failed" || u.status === "completed"))
    .map((u) => u.status);
  assert.deepEqual(statuses, ["failed", "completed"]);
  const diff = agent.updatesFor(sessionId).find((u) => u.sessionUpdate === "tool_call_update" && u.status === "completed").content[0];
  assert.equal(diff.type, "diff");
  assert.equal(diff.oldText, src, "the failed multi_edit left the file as it was");
});

test("a GBK file keeps its bytes outside the edited region; an edit after the file changed on disk is refused as stale", async (t) => {
  const { agent, model, workdir } = await world(t);
  const before = "// 配置文件：请勿随意修改\r\nconst 名称 = '旧的值';\r\nconst 端口 = 8080; // 服务端口\r\n";
  const bytes = iconv.encode(before, "gbk");
  const path = join(workdir, "config.js");
  writeFileSync(path, bytes);
  model.enqueue(
    { toolCalls: [{ name: "read_file", arguments: { path: "config.js" } }] },
    { toolCalls: [{ name: "edit_file", arguments: { path: "config.js", oldText: "'旧的值'", newText: "'新的值'" } }] },
    { content: ["changed"] },
  );
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  await agent.prompt(sessionId, "change the name");
  const [read, edited] = toolResults(model);
  assert.match(read!, /const 名称 = '旧的值';/, "the model reads the text decoded");
  assert.equal(edited, "Applied 1 edit to config.js.");
  const after = readFileSync(path);
  const want = iconv.encode(before.replace("旧的值", "新的值"), "gbk");
  assert.ok(after.equals(want), "GBK, CRLF, every other byte as it was");
  const at = bytes.indexOf(iconv.encode("'旧的值'", "gbk"));
  assert.ok(after.subarray(0, at).equals(bytes.subarray(0, at)), "the bytes before the edit");
  assert.ok(after.subarray(after.length - (bytes.length - at - 8)).equals(bytes.subarray(at + 8)), "the bytes after it");

  // Someone else changes the file after the model read it: the next edit is refused, the file kept.
  const theirs = Buffer.concat([after, iconv.encode("// 别人的修改\r\n", "gbk")]);
  writeFileSync(path, theirs);
  model.enqueue({ toolCalls: [{ name: "edit_file", arguments: { path: "config.js", oldText: "8080", newText: "9090" } }] }, { content: ["stale"] });
  await agent.prompt(sessionId, "change the port");
  const stale = toolResults(model).at(-1)!;
  assert.match(stale, /config\.js has changed since you last read it \(on disk or in the editor\)\. Read the file again/);
  assert.ok(readFileSync(path).equals(theirs), "their change is kept, nothing written");
});
