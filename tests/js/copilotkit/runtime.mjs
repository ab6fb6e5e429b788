// A CopilotRuntime serving a LangGraph agent as CopilotKit's current docs show (the v2
// runtime: `createCopilotRuntimeHandler` with an `InMemoryAgentRunner`, mounted on a
// node http server with `createCopilotNodeHandler`), on a local port: `LangGraphAgent`
// from @ag-ui/langgraph (bare), or the drop-in (adopted). The only difference between
// the two is the import.
import { readFile } from "node:fs/promises";
import { createServer } from "node:http";
import { join } from "node:path";

import { LangGraphAgent as BareAgent } from "@ag-ui/langgraph";
import { LangGraphAgent as CopilotKitAgent } from "@copilotkit/runtime/langgraph";
import {
  CopilotRuntime,
  InMemoryAgentRunner,
  createCopilotRuntimeHandler,
} from "@copilotkit/runtime/v2";
import { createCopilotNodeHandler } from "@copilotkit/runtime/v2/node";

import {
  LangGraphAgent as AdoptedAgent,
  withFinalAnswer,
} from "../../../clients/js/src/ag-ui/index.js";

export const BASE_PATH = "/api/copilotkit";
export const AGENT = "EvoScientist";

/**
 * The agent classes compared: @ag-ui/langgraph's, bare and adopted, and
 * @copilotkit/runtime/langgraph's subclass of it with the same behaviour mixed in.
 */
export const AGENTS = {
  bare: BareAgent,
  adopted: AdoptedAgent,
  "adopted-copilotkit": withFinalAnswer(CopilotKitAgent),
};

const PAGE_FILES = { "/page/": ["index.html", "text/html"], "/page/page.js": ["page.js", "text/javascript"] };

/**
 * Serve a runtime whose agent (`graphId`, served as agent `AGENT`) talks to
 * `deploymentUrl`; resolves to {url, origin, close}. With `pageDir` (page/build.mjs's
 * output) the same origin serves the page under /page/.
 */
export async function startRuntime({
  deploymentUrl,
  agent = "bare",
  graphId = AGENT,
  maxWaitMs = 90_000,
  pageDir = null,
}) {
  const LangGraphAgent = AGENTS[agent];
  const runtime = new CopilotRuntime({
    agents: {
      [AGENT]: new LangGraphAgent({
        deploymentUrl,
        graphId,
        ...(agent === "bare" ? {} : { finalAnswer: { maxWaitMs } }),
      }),
    },
    runner: new InMemoryAgentRunner(),
  });
  const handler = createCopilotRuntimeHandler({ runtime, basePath: BASE_PATH });
  const copilot = createCopilotNodeHandler(handler);
  const server = createServer((req, res) => {
    const file = pageDir && PAGE_FILES[new URL(req.url, "http://x").pathname];
    if (!file) return copilot(req, res);
    return readFile(join(pageDir, file[0])).then((body) => {
      res.writeHead(200, { "content-type": file[1] });
      res.end(body);
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}${BASE_PATH}`,
    origin: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
