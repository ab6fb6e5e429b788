// Bundles page.jsx with esbuild (clients/js's): `node page/build.mjs OUTDIR`.
import { writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const esbuild = join(here, "..", "..", "..", "..", "clients", "js", "node_modules", "esbuild", "lib", "main.js");
const { build } = await import(esbuild);
const outdir = resolve(process.argv[2] ?? join(here, "dist"));
await build({
  entryPoints: [join(here, "page.jsx")],
  bundle: true,
  format: "esm",
  outfile: join(outdir, "page.js"),
  jsx: "automatic",
  define: { "process.env.NODE_ENV": '"production"' },
  loader: { ".css": "empty" },
  logLevel: "error",
});
writeFileSync(
  join(outdir, "index.html"),
  '<!doctype html><meta charset="utf-8"><title>chat</title><div id="root"></div><script type="module" src="page.js"></script>\n',
);
