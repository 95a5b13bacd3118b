import { test } from "node:test";
import assert from "node:assert/strict";
import { TurnLink } from "./turn-link.js";

test("before it is bound the link answers as a session with no turn: nothing open, holds pass, work runs at once", async () => {
  const link = new TurnLink();
  assert.deepEqual([link.running, link.open, link.queued, link.origin, link.turnId, link.held], [false, false, 0, undefined, undefined, undefined]);
  assert.equal(await link.hold("a write", new AbortController().signal), true);
  assert.equal(await link.serially(async () => 7), 7);
  assert.equal(link.abortForStoreFault(new Error("disk full")), false);
  link.emit({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "dropped" } });
});
