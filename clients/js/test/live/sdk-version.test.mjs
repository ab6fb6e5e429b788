// Which @langchain/langgraph-sdk the live tests import: tests/js/test_live.py runs them
// on each SDK of its matrix and checks, through this test, that the matrix is real.
//   EVOSCI_SDK_VERSION  the version the harness selected (unset: nothing to check)
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const EXPECTED = process.env.EVOSCI_SDK_VERSION;

test("the SDK the live tests import", { skip: !EXPECTED && "EVOSCI_SDK_VERSION not set" }, () => {
  // dist/index.js → the package's own package.json
  const entry = fileURLToPath(import.meta.resolve("@langchain/langgraph-sdk"));
  const manifest = JSON.parse(readFileSync(join(dirname(entry), "..", "package.json"), "utf8"));
  assert.equal(manifest.name, "@langchain/langgraph-sdk");
  assert.equal(manifest.version, EXPECTED);
});
