// SSE parsing: any split of the bytes parses the same; fields; cut frames.

import assert from "node:assert/strict";
import { test } from "node:test";

import {
  accumulateEvents,
  createSseParser,
  parseSse,
} from "../../src/core/index.js";
import {
  ANSWER,
  enc,
  runStream,
  splitBytes,
} from "../fixtures.mjs";

test("a stream split at any byte, even inside a UTF-8 character or a CRLF, parses the same", () => {
  const bytes = enc.encode(runStream({ terminal: "end" }));
  const whole = parseSse([bytes]);
  assert.ok(whole.events.length > 10);
  assert.equal(whole.events.at(-1).event, "end");
  const multibyte = [...bytes.keys()].filter((i) => bytes[i] >= 0x80 && (bytes[i] & 0xc0) === 0x80);
  assert.ok(multibyte.length > 0, "the fixture has multibyte characters");
  for (let cut = 1; cut < bytes.length; cut += 1) {
    assert.deepEqual(parseSse(splitBytes(bytes, [cut])).events, whole.events, `cut at ${cut}`);
  }
  // Every byte its own read.
  assert.deepEqual(parseSse(splitBytes(bytes, [...bytes.keys()].slice(1))).events, whole.events);
});

test("a CR at the end of a read waits for a possible LF", () => {
  const parser = createSseParser();
  assert.deepEqual(parser.push(enc.encode("event: a\r\ndata: 1\r")), []);
  assert.deepEqual(parser.push(enc.encode("\n\r")), []);
  assert.deepEqual(parser.push(enc.encode("\nevent: b\rdata: 2\r\r")), [
    { event: "a", data: "1", id: null },
  ]);
  assert.deepEqual(parser.push(enc.encode("x")), [{ event: "b", data: "2", id: null }]);
});

test("SSE fields: comments, multi-line data, ids, default event name, no space after colon", () => {
  const { events, lastEventId } = parseSse([
    ": heartbeat\n\nid: 7\ndata:first\ndata: second\n\nevent: custom\ndata\nid\n\n",
  ]);
  assert.deepEqual(events, [
    { event: "message", data: "first\nsecond", id: "7" },
    { event: "custom", data: "", id: "" },
  ]);
  assert.equal(lastEventId, "");
});

test("an event cut before its blank line is never dispatched", () => {
  const text = runStream({ terminal: "end" });
  const cut = text.indexOf("Done.");
  const { events, pending } = parseSse([enc.encode(text.slice(0, cut + 3))]);
  assert.equal(pending, true);
  assert.ok(events.every((e) => !e.data.includes("Done")));
  assert.equal(accumulateEvents(events).text, ANSWER.slice(0, ANSWER.indexOf("Done.")));
});
