// `node --import ./resolve.mjs`: the package's sources (clients/js/src) import their peer
// dependencies (@ag-ui/langgraph, …) from this folder's node_modules, as they would from
// an app's that installed the package, so the runtime and the drop-in share one
// @ag-ui/langgraph and one @ag-ui/client.
import { register } from "node:module";

register("./resolve-hooks.mjs", import.meta.url);
