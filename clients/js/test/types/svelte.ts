// Compiled by `tsc --noEmit` (tests/js/test_package.py): the @langchain/svelte binding's
// declarations as an app uses them.
import {
  useStreamWithRecovery,
  type Recovery,
} from "@evoscientist/final-answer/svelte";

let active: string | null = null;

export function chat() {
  const stream = useStreamWithRecovery({
    apiUrl: "http://127.0.0.1:2024",
    assistantId: "EvoScientist",
    threadId: () => active,
    transport: "websocket",
    recovery: { maxWaitMs: 120_000 },
  });
  const recovery: Recovery = stream.recovery;
  const count: number = stream.messages.length;
  const submit = () => stream.submit({ messages: [{ type: "human", content: "hi" }] });
  // @ts-expect-error recovery.status is a closed set
  const wrong: typeof recovery.status = "done";
  active = stream.threadId;
  return { count, submit, loading: stream.isLoading, recovered: recovery.recovered, wrong };
}
