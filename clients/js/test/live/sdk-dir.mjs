// `node --import ./test/live/sdk-dir.mjs`: with EVOSCI_SDK_DIR set (a prefix where
// another @langchain/langgraph-sdk was installed with `npm install --no-save`, see
// tests/support/jstools.py), every import of the SDK resolves to that one, so the live tests run
// on each SDK of the matrix while the lockfile stays on its own.
import { register } from "node:module";

if (process.env.EVOSCI_SDK_DIR) {
  register("./sdk-dir-hooks.mjs", import.meta.url, { data: process.env.EVOSCI_SDK_DIR });
}
