// The declarations of @evoscientist/final-answer/ag-ui as a runtime's route uses them
// (tsc --noEmit -p tests/js/copilotkit, run by tests/js/test_copilotkit.py).
import { LangGraphAgent as CopilotKitLangGraphAgent } from "@copilotkit/runtime/langgraph";
import { LangGraphAgent as AgUiLangGraphAgent } from "@ag-ui/langgraph";
import {
  LangGraphAgent,
  TextLedger,
  withAnswerText,
  withFinalAnswer,
} from "@evoscientist/final-answer/ag-ui";

const agent = new LangGraphAgent({
  deploymentUrl: "http://127.0.0.1:2024",
  graphId: "EvoScientist",
  finalAnswer: { maxWaitMs: 60_000 },
});
const base: AgUiLangGraphAgent = agent;
base.abortRun();

const Wrapped = withFinalAnswer(CopilotKitLangGraphAgent);
const wrapped: CopilotKitLangGraphAgent = new Wrapped({ deploymentUrl: "x", graphId: "g" });
void wrapped;

const answer = {
  content: "Hello",
  completed_at: null,
  complete: true,
  status: "success" as const,
  thread_id: "t",
  run_id: "r",
  checkpoint_id: null,
  message_id: "m",
  updated_at: null,
  source: "checkpointer" as const,
  error: null,
  interrupts: [],
};
const ledger = new TextLedger();
ledger.record({ type: "TEXT_MESSAGE_START", messageId: "m" });
const events: Array<{ type: string }> = ledger.completion(answer);
const messages = withAnswerText([{ id: "m", role: "assistant", content: "Hel" }], answer);
void events;
void messages;

// @ts-expect-error the drop-in takes LangGraphAgent's options: graphId is required
new LangGraphAgent({ deploymentUrl: "http://127.0.0.1:2024" });
