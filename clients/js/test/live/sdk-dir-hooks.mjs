// The module hooks sdk-dir.mjs registers: `@langchain/langgraph-sdk` (and its subpaths)
// resolved from the prefix's node_modules; what the SDK itself imports resolves from
// where it sits, so @langchain/core and react stay clients/js's.
import { pathToFileURL } from "node:url";

const SDK = /^@langchain\/langgraph-sdk(\/.*)?$/;
let prefix;

export function initialize(dir) {
  prefix = pathToFileURL(`${dir}/`).href;
}

export function resolve(specifier, context, next) {
  if (SDK.test(specifier)) return next(specifier, { ...context, parentURL: prefix });
  return next(specifier, context);
}
