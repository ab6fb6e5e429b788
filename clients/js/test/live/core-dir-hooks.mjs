// The module hooks core-dir.mjs registers: `@langchain/core` (and its subpaths) resolved
// from the prefix's node_modules; what it imports itself resolves from where it sits.
import { pathToFileURL } from "node:url";

const CORE = /^@langchain\/core(\/.*)?$/;
let prefix;

export function initialize(dir) {
  prefix = pathToFileURL(`${dir}/`).href;
}

export function resolve(specifier, context, next) {
  if (CORE.test(specifier)) return next(specifier, { ...context, parentURL: prefix });
  return next(specifier, context);
}
