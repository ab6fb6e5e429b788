// Bundles app.jsx with esbuild: `node build.mjs OUTDIR`. The package is resolved as an
// app resolves it (through its package.json `exports`): from clients/js, or — with
// EVOSCI_PAGE_NODE_MODULES set — from an app's node_modules where its tarball was
// installed beside the SDK, as an outside user has it.
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
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

await build({
  entryPoints: [join(here, "app.jsx")],
  bundle: true,
  format: "esm",
  jsx: "automatic",
  outfile: join(outdir, "app.js"),
  nodePaths,
  define: { "process.env.NODE_ENV": '"production"' },
  logLevel: "warning",
});
writeFileSync(
  join(outdir, "index.html"),
  '<!doctype html><meta charset="utf-8"><title>chat</title><div id="root"></div><script type="module" src="app.js"></script>\n',
);
console.log(outdir);
