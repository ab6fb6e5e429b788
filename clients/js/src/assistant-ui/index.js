// @evoscientist/final-answer/assistant-ui: the `stream` callback for
// @assistant-ui/react-langgraph's `useLangGraphRuntime`. No React here: the callback
// is plain async iteration over the SDK's run stream. Its `load` property is the runtime's
// `load` for the same threads (load.js).

export { STOPPED_STATUS, createLangGraphStreamWithRecovery } from "./stream.js";
// Upstream's name, so that adoption can be the import alone.
export { createLangGraphStreamWithRecovery as unstable_createLangGraphStream } from "./stream.js";
