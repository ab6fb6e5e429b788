// The hooks resolve.mjs registers: a bare specifier imported by a file of clients/js/src
// resolves from this folder.
import { fileURLToPath, pathToFileURL } from "node:url";

const HERE = pathToFileURL(`${fileURLToPath(new URL(".", import.meta.url))}`).href;
const SOURCES = new URL("../../../clients/js/src/", import.meta.url).href;
const BARE = /^(?![./]|node:|file:)/;

export function resolve(specifier, context, next) {
  if (BARE.test(specifier) && context.parentURL?.startsWith(SOURCES)) {
    return next(specifier, { ...context, parentURL: HERE });
  }
  return next(specifier, context);
}
