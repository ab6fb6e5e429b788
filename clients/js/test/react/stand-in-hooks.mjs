// Module hooks for drop-in.test.mjs: the drop-in's import of
// `@langchain/langgraph-sdk/react` resolves to stand-in.mjs, as vitest resolves it to
// an app's `vi.mock` when the drop-in is inlined. Everything else resolves as usual.

const STAND_IN = new URL("./stand-in.mjs", import.meta.url).href;

export function resolve(specifier, context, next) {
  if (specifier === "@langchain/langgraph-sdk/react" && context.parentURL?.includes("/src/react/")) {
    return { url: STAND_IN, shortCircuit: true };
  }
  return next(specifier, context);
}
