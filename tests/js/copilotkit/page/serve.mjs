// The page's servers, in one process: each line read from stdin is a JSON object
// {name: {agent, deploymentUrl, graphId?}} naming runtimes to start (one per agent class
// of runtime.mjs's AGENTS, its agent talking to `deploymentUrl`), each serving the page
// (EVOSCI_CK_PAGE_DIR, page/build.mjs's output) beside the runtime; once they listen,
// {name: {url, origin}} is printed as one JSON line. Serves until stdin closes.
import { createInterface } from "node:readline";

import { startRuntime } from "../runtime.mjs";

const started = [];

for await (const line of createInterface({ input: process.stdin })) {
  if (!line.trim()) continue;
  const urls = {};
  for (const [name, { agent, deploymentUrl, graphId }] of Object.entries(JSON.parse(line))) {
    const runtime = await startRuntime({ deploymentUrl, agent, graphId, pageDir: process.env.EVOSCI_CK_PAGE_DIR });
    started.push(runtime);
    urls[name] = { url: runtime.url, origin: runtime.origin };
  }
  console.log(JSON.stringify(urls));
}
await Promise.all(started.map((runtime) => runtime.close()));
process.exit(0);
