// Bundles app.jsx with esbuild: `node build.mjs OUTDIR`. The package is resolved as an
// app resolves it (through its package.json `exports`): from clients/js, or — with
// EVOSCI_PAGE_NODE_MODULES set — from an app's node_modules where its tarball was
// installed beside the SDK, as an outside user has it.
import { existsSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const pkg = resolve(here, "..", "..", "clients", "js");
const external = process.env.EVOSCI_PAGE_NODE_MODULES;
const { build } = await import(
  join(external ?? join(pkg, "node_modules"), "esbuild", "lib", "main.js")
);

const outdir = resolve(process.argv[2] ?? join(here, "dist"));
let nodePaths;
if (external) {
  nodePaths = [resolve(external)];
} else {
  const modules = join(mkdtempSync(join(tmpdir(), "evosci-page-")), "node_modules");
  mkdirSync(join(modules, "@evoscientist"), { recursive: true });
  symlinkSync(pkg, join(modules, "@evoscientist", "final-answer"));
  nodePaths = [modules, join(pkg, "node_modules")];
}

// The @langchain/react page (langchain-react.jsx) too, where that binding is installed.
const entryPoints = { app: join(here, "app.jsx") };
if (existsSync(join(external ?? join(pkg, "node_modules"), "@langchain", "react"))) {
  entryPoints["langchain-react"] = join(here, "langchain-react.jsx");
}

await build({
  entryPoints,
  bundle: true,
  format: "esm",
  jsx: "automatic",
  outdir,
  nodePaths,
  define: { "process.env.NODE_ENV": '"production"' },
  logLevel: "warning",
});
const html = (script) =>
  `<!doctype html><meta charset="utf-8"><title>chat</title><div id="root"></div><script type="module" src="${script}"></script>\n`;
writeFileSync(join(outdir, "index.html"), html("app.js"));
if (entryPoints["langchain-react"]) {
  writeFileSync(join(outdir, "langchain-react.html"), html("langchain-react.js"));
}
console.log(outdir);
