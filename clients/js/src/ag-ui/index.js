// @evoscientist/final-answer/ag-ui: the drop-in for @ag-ui/langgraph's `LangGraphAgent`
// (the CopilotKit runtime's LangGraph agent). Same options; change one import.

import { LangGraphAgent as BaseLangGraphAgent } from "@ag-ui/langgraph";

import { withFinalAnswer } from "./agent.js";

export { followErrorCode, withFinalAnswer } from "./agent.js";
export { TextLedger } from "./ledger.js";
export { answerIndex, withAnswerText } from "./messages.js";

export const LangGraphAgent = withFinalAnswer(BaseLangGraphAgent);
