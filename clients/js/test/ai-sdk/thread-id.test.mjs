// A chat id as a thread id (no network).
import assert from "node:assert/strict";
import test from "node:test";

import { threadIdOf } from "../../src/ai-sdk/thread-id.js";

test("a UUID chat id is the thread id", async () => {
  assert.equal(await threadIdOf("5B0F4C1E-6A3D-4E47-9C2A-8F1D3B7E6A90"), "5b0f4c1e-6a3d-4e47-9c2a-8f1d3b7e6a90");
});

test("any other chat id is its UUID v5 in the package's namespace, the same each time", async () => {
  // Python: uuid.uuid5(uuid.UUID(CHAT_NAMESPACE), "abc")
  assert.equal(await threadIdOf("abc"), "54189fc2-4707-5d63-9f7e-9c86b8c7c093");
  assert.equal(await threadIdOf("abc"), await threadIdOf("abc"));
  assert.notEqual(await threadIdOf("abd"), await threadIdOf("abc"));
});
