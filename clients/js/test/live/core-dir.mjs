// `node --import ./test/live/core-dir.mjs`: with EVOSCI_CORE_DIR set (a prefix where
// @langchain/core's floor was installed with `npm install --no-save`, see
// tests/support/jstools.py's CORE_FLOOR), every import of @langchain/core resolves to
// that one, so the unit tests also run on the oldest @langchain/core the peer range admits.
import { register } from "node:module";

if (process.env.EVOSCI_CORE_DIR) {
  register("./core-dir-hooks.mjs", import.meta.url, { data: process.env.EVOSCI_CORE_DIR });
}
