import assert from "node:assert/strict";
import { test } from "node:test";
import { Ajv } from "ajv";
import { askUserTool } from "./ask-user.js";
import { call, fixture } from "../../../test/support/tool-fixture.js";
import { builtinTools } from "./index.js";
import { todoWriteTool } from "./todo-write.js";

test("the built-in tools come in a fixed order", () => {
  assert.deepEqual(
    builtinTools().map((t) => t.name),
    [
      "read_file",
      "list_directory",
      "glob",
      "grep",
      "write_file",
      "edit_file",
      "run_command",
      "todo_write",
      "ask_user",
      "exit_plan_mode",
      "update_goal",
      "multi_edit",
      "web_fetch",
      "command_output",
      "command_wait",
      "command_kill",
      "task",
      "skill",
    ],
  );
  assert.equal(JSON.stringify(builtinTools().map((t) => t.parameters)), JSON.stringify(builtinTools().map((t) => t.parameters)));
});

/** Arguments the JSON Schema and the zod parser must agree on, accepted or refused alike. */
const samples: Record<string, [unknown, boolean][]> = {
  read_file: [
    [{ path: "a" }, true],
    [{ path: "a", offset: 2, limit: 3 }, true],
    [{ path: "a", offset: 0 }, false],
    [{ path: "a", limit: 1.5 }, false],
    [{}, false],
  ],
  list_directory: [
    [{}, true],
    [{ path: "src" }, true],
    [{ path: 3 }, false],
  ],
  glob: [
    [{ pattern: "**/*" }, true],
    [{ pattern: "*", path: "x" }, true],
    [{}, false],
  ],
  grep: [
    [{ pattern: "a", glob: "*.ts", ignoreCase: true, maxResults: 5 }, true],
    [{ pattern: "a", maxResults: 0 }, false],
    [{ pattern: "a", ignoreCase: "yes" }, false],
  ],
  write_file: [
    [{ path: "a", content: "" }, true],
    [{ path: "a" }, false],
  ],
  edit_file: [
    [{ path: "a", edits: [{ oldText: "x", newText: "y", replaceAll: true }] }, true],
    [{ path: "a", oldText: "x", newText: "y" }, true],
    [{ path: "a", edits: [] }, false],
    [{ path: "a", edits: [{ oldText: "x" }] }, false],
  ],
  run_command: [
    [{ command: "ls", cwd: "x", timeoutSeconds: 5 }, true],
    [{ command: "ls", timeoutSeconds: 0 }, false],
    [{ command: "ls", timeoutSeconds: 601 }, false],
    [{ command: "npm run dev", background: true }, true],
    [{ command: "ls", background: "yes" }, false],
  ],
  todo_write: [
    [{ todos: [] }, true],
    [{ todos: [{ content: "a", status: "pending", priority: "high" }] }, true],
    [{ todos: [{ content: "a", status: "done" }] }, false],
  ],
  ask_user: [
    [{ question: "q", choices: ["a"] }, true],
    [{ question: "q", choices: [] }, false],
    [{ question: "q", choices: Array(11).fill("x") }, false],
  ],
  exit_plan_mode: [
    [{ plan: "do x" }, true],
    [{ plan: "do x", steps: ["a", "b"] }, true],
    [{}, false],
    [{ plan: "x", steps: "a" }, false],
  ],
  update_goal: [
    [{ status: "complete", summary: "done" }, true],
    [{ status: "finished", summary: "x" }, false],
    [{ status: "continue" }, false],
  ],
  multi_edit: [
    [{ path: "a", edits: [{ oldText: "x", newText: "y" }] }, true],
    [
      {
        path: "a",
        edits: [
          { oldText: "x", newText: "y", replaceAll: true },
          { oldText: "p", newText: "q" },
        ],
      },
      true,
    ],
    [{ path: "a", edits: [] }, false],
    [{ path: "a", oldText: "x", newText: "y" }, false],
    [{ path: "a", edits: [{ oldText: "x" }] }, false],
  ],
  web_fetch: [
    [{ url: "https://example.com" }, true],
    [{}, false],
  ],
  command_output: [
    [{ jobId: "job-1" }, true],
    [{}, false],
  ],
  command_wait: [
    [{ jobId: "job-1", timeoutSeconds: 5 }, true],
    [{ jobId: "job-1", timeoutSeconds: 601 }, false],
  ],
  command_kill: [
    [{ jobId: "job-1" }, true],
    [{ jobId: "" }, false],
  ],
  task: [
    [{ prompt: "Where is the parser?" }, true],
    [{ prompt: "Fix the typo", allowEdits: true }, true],
    [{ prompt: "x", allowEdits: "yes" }, false],
    [{ prompt: "" }, false],
    [{}, false],
  ],
  skill: [
    [{ name: "release-notes" }, true],
    [{ name: "" }, false],
    [{}, false],
  ],
};

test("each tool's JSON Schema agrees with its zod parser", () => {
  const ajv = new Ajv({ strict: true });
  for (const tool of builtinTools()) {
    assert.equal(tool.parameters.type, "object", tool.name);
    const validate = ajv.compile(tool.parameters);
    const cases = samples[tool.name];
    assert.ok(cases, `no samples for ${tool.name}`);
    for (const [args, ok] of cases) {
      assert.equal(validate(args), ok, `${tool.name} schema on ${JSON.stringify(args)}`);
      assert.equal(tool.prepare(args, { cwd: "/tmp", roots: ["/tmp"] }).ok, ok, `${tool.name} zod on ${JSON.stringify(args)}`);
    }
  }
});

test("todo_write sends the complete plan with default priorities", async () => {
  const f = fixture();
  try {
    const todos = [
      { content: "Read the code", status: "completed" },
      { content: "Fix the bug", status: "in_progress", priority: "high" },
      { content: "Run tests", status: "pending" },
    ];
    const p = todoWriteTool.prepare({ todos }, f.ctx);
    assert.ok(p.ok);
    assert.deepEqual([p.call.title, p.call.kind, p.call.access], ["Update plan", "think", { type: "none" }]);
    const r = await p.call.run(f.ctx);
    assert.deepEqual(f.plans, [
      [
        { content: "Read the code", status: "completed", priority: "medium" },
        { content: "Fix the bug", status: "in_progress", priority: "high" },
        { content: "Run tests", status: "pending", priority: "medium" },
      ],
    ]);
    assert.equal(r.output, "Plan updated: 3 items (1 completed, 1 in progress, 1 pending). Current: Fix the bug");
    assert.equal((await call(todoWriteTool, { todos: [] }, f.ctx)).output, "Plan cleared.");
    assert.deepEqual(f.plans[1], []);
  } finally {
    f.cleanup();
  }
});

test("ask_user relays the answer or the dismissal", async () => {
  const f = fixture();
  try {
    const p = askUserTool.prepare({ question: "Which DB?", choices: ["Postgres", "SQLite"] }, f.ctx);
    assert.ok(p.ok);
    assert.deepEqual([p.call.title, p.call.kind, p.call.access], ["Ask: Which DB?", "other", { type: "none" }]);
    f.answer = "SQLite";
    assert.equal((await p.call.run(f.ctx)).output, "The user answered: SQLite");
    assert.deepEqual(f.questions, [{ question: "Which DB?", choices: ["Postgres", "SQLite"] }]);
    f.answer = undefined;
    assert.equal((await p.call.run(f.ctx)).output, "The user dismissed the question.");
  } finally {
    f.cleanup();
  }
});
