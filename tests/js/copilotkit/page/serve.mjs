// The page's servers: one runtime per agent class named in EVOSCI_CK_PAGE_AGENTS (JSON
// {name: {agent, deploymentUrl}}), each serving the page (EVOSCI_CK_PAGE_DIR) beside
// the runtime. Prints {name: {url, origin}} as one JSON line, then serves until stdin
// closes.
import { startRuntime } from "../runtime.mjs";

const specs = JSON.parse(process.env.EVOSCI_CK_PAGE_AGENTS);
const started = {};
for (const [name, { agent, deploymentUrl }] of Object.entries(specs)) {
  started[name] = await startRuntime({ deploymentUrl, agent, pageDir: process.env.EVOSCI_CK_PAGE_DIR });
}
console.log(JSON.stringify(Object.fromEntries(Object.entries(started).map(([n, r]) => [n, { url: r.url, origin: r.origin }]))));
process.stdin.resume();
process.stdin.on("end", async () => {
  await Promise.all(Object.values(started).map((runtime) => runtime.close()));
  process.exit(0);
});
