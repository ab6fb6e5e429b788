// The browser side: @ag-ui/client's `HttpAgent` posting each run to the runtime's
// `POST {basePath}/agent/{agentId}/run`, as CopilotKit's own client does without
// `useSingleEndpoint`.
import { randomUUID } from "node:crypto";

import { HttpAgent } from "@ag-ui/client";

export function runtimeAgent(runtimeUrl, agentId, threadId) {
  return new HttpAgent({ url: `${runtimeUrl}/agent/${agentId}/run`, agentId, threadId });
}

/**
 * One turn as a page runs it: the question added, the run awaited. Resolves to what the
 * client ends with: whether it saw RUN_FINISHED, its RUN_ERROR, its own error, and the
 * text of its last assistant message.
 */
export async function ask(agent, question) {
  const events = [];
  agent.addMessage({ id: randomUUID(), role: "user", content: question });
  let error = null;
  try {
    await agent.runAgent({ runId: randomUUID() }, { onEvent: ({ event }) => events.push(event) });
  } catch (caught) {
    error = caught;
  }
  const last = [...agent.messages].reverse().find((m) => m.role === "assistant" && m.content);
  return {
    events,
    finished: events.some((event) => event.type === "RUN_FINISHED"),
    runError: events.find((event) => event.type === "RUN_ERROR") ?? null,
    error: error ? String(error.message ?? error) : null,
    text: last ? last.content : "",
  };
}
