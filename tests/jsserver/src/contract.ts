// The contract graph (langgraph.json → graphs → contract), the same as
// tests/support/contract_graph.py's for the Python `langgraph dev`, so the final-answer
// route's JSON can be compared across the two servers apart from ids and timestamps.
//
// One node, `agent`, answers the latest human message `q` through a fake streaming chat
// model (no network, no key), token by token, so a `messages` stream shows chunks:
// - `[fail]` in `q`: the model streams the answer's first FAIL_AFTER tokens, then throws
//   `Error(FAILURE)`, and so the node and the run fail;
// - `[interrupt]` in `q`: the node calls `interrupt(QUESTION)` first; resumed, it answers;
// - `[think]` in `q`: the answer opens with its reasoning inline (`<think>…</think>`);
// - otherwise the answer is `answerFor(q)`, in word-sized tokens, SLOW_DELAY s apart when
//   `q` holds `[slow]`, else DELAY s.
// The AI message's id is the framework's (`run-…` here, `lc_run--…` in Python).

import type { CallbackManagerForLLMRun } from "@langchain/core/callbacks/manager";
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, AIMessageChunk, type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { ChatGenerationChunk, type ChatResult } from "@langchain/core/outputs";
import type { RunnableConfig } from "@langchain/core/runnables";
import { END, interrupt, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";

const FAIL = "[fail]";
const INTERRUPT = "[interrupt]";
const SLOW = "[slow]";
const THINK = "[think]";
const FAILURE = "the search backend is down";
const FAIL_AFTER = 3;
const QUESTION = { question: "approve?" };
const DELAY_S = 0.01;
const SLOW_DELAY_S = 0.1;

// The same expression as contract_graph.py's: each token is a word with the whitespace
// after it, so the tokens join back to the text exactly.
const TOKEN = /\s*\S+\s*/g;

export function answerFor(q: string): string {
  const reasoning = q.includes(THINK) ? `<think>Weighing: ${q}</think>` : "";
  return (
    `${reasoning}Answer to "${q}": a control group receives no ` +
    "treatment, so any difference is the treatment's effect."
  );
}

export function tokenize(text: string): string[] {
  return text.match(TOKEN) ?? [];
}

function questionOf(messages: BaseMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    if (HumanMessage.isInstance(messages[i])) return messages[i].text;
  }
  return "";
}

const sleep = (seconds: number) => new Promise((resolve) => setTimeout(resolve, seconds * 1000));

/** A fake chat model: the contract's answer to the latest question, streamed. */
class ContractChatModel extends BaseChatModel {
  _llmType(): string {
    return "contract-fake";
  }

  async *_streamResponseChunks(
    messages: BaseMessage[],
    _options: this["ParsedCallOptions"],
    runManager?: CallbackManagerForLLMRun,
  ): AsyncGenerator<ChatGenerationChunk> {
    const q = questionOf(messages);
    const tokens = tokenize(answerFor(q));
    const delay = q.includes(SLOW) ? SLOW_DELAY_S : DELAY_S;
    const fails = q.includes(FAIL);
    for (const token of fails ? tokens.slice(0, FAIL_AFTER) : tokens) {
      await sleep(delay);
      const chunk = new ChatGenerationChunk({ text: token, message: new AIMessageChunk({ content: token }) });
      await runManager?.handleLLMNewToken(token, undefined, undefined, undefined, undefined, { chunk });
      yield chunk;
    }
    if (fails) throw new Error(FAILURE);
  }

  async _generate(
    messages: BaseMessage[],
    options: this["ParsedCallOptions"],
    runManager?: CallbackManagerForLLMRun,
  ): Promise<ChatResult> {
    // Not streamed: the same tokens joined (the framework gives the message its id).
    let content = "";
    for await (const chunk of this._streamResponseChunks(messages, options, runManager)) {
      content += chunk.text;
    }
    return { generations: [{ text: content, message: new AIMessage({ content }) }] };
  }
}

const model = new ContractChatModel({});

async function agent(state: typeof MessagesAnnotation.State, config: RunnableConfig) {
  if (questionOf(state.messages).includes(INTERRUPT)) interrupt(QUESTION);
  return { messages: [await model.invoke(state.messages, config)] };
}

export const graph = new StateGraph(MessagesAnnotation)
  .addNode("agent", agent)
  .addEdge(START, "agent")
  .addEdge("agent", END)
  .compile();
