// Bundles app.jsx with esbuild: `node build.mjs OUTDIR`. The package is resolved as an
// app resolves it (through its package.json `exports`): from clients/js, or — with
// EVOSCI_PAGE_NODE_MODULES set — from an app's node_modules where its tarball was
// installed beside the SDK, as an outside user has it. With EVOSCI_SDK_DIR set (a prefix
// where another @langchain/langgraph-sdk was installed, see tests/support/jstools.py), every
// import of the SDK, the package's own included, takes that one.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const pkg = resolve(here, "..", "..", "..", "clients", "js");
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

// The SDK resolved from its prefix; what it imports (react, @langchain/core) still
// resolves from clients/js, so the page keeps one React.
const sdkDir = process.env.EVOSCI_SDK_DIR;
const SDK = /^@langchain\/langgraph-sdk(\/.*)?$/;
const plugins = sdkDir
  ? [
      {
        name: "sdk-dir",
        setup(build) {
          build.onResolve({ filter: SDK }, (args) =>
            args.pluginData === "sdk-dir"
              ? undefined
              : build.resolve(args.path, {
                  kind: args.kind,
                  resolveDir: resolve(sdkDir),
                  pluginData: "sdk-dir",
                }),
          );
        },
      },
    ]
  : [];

// Pages: app.jsx (the WebUI's shape), streaming.jsx (one field read, for token streaming),
// and langchain-react.jsx where that binding is installed (likewise assistant-ui.jsx, ai-sdk.jsx). The binding brings its own SDK
// (it pins one), so its page is left out of a build for another SDK.
const PAGES = { index: "app", streaming: "streaming" };
// Minified as an app ships its pages: each page load in the suite parses its bundle
// (1.5 to 4.3 MB unminified), on the same two cores as every other test. Names are kept:
// libraries read their classes' names (errors, @langchain/core's messages).
const SMALL = { minify: true, keepNames: true };
const installed = (...names) => existsSync(join(external ?? join(pkg, "node_modules"), ...names));
if (!sdkDir && installed("@langchain", "react")) PAGES["langchain-react"] = "langchain-react";
// assistant-ui's page runs on the lockfile's SDK (its peer), as an assistant-ui app does.
if (!sdkDir && installed("@assistant-ui", "react-langgraph")) PAGES["assistant-ui"] = "assistant-ui";
// The AI SDK's `useChat` page, where @ai-sdk/react is installed (it brings its own `ai`).
if (!sdkDir && installed("@ai-sdk", "react")) PAGES["ai-sdk"] = "ai-sdk";
const { metafile } = await build({
  entryPoints: Object.values(PAGES).map((name) => join(here, `${name}.jsx`)),
  bundle: true,
  format: "esm",
  jsx: "automatic",
  outdir,
  nodePaths,
  plugins,
  metafile: true,
  define: { "process.env.NODE_ENV": '"production"' },
  ...SMALL,
  logLevel: "warning",
});
// The Svelte page, where @langchain/svelte is installed: its own build, with the Svelte
// compiler (esbuild-svelte) and Svelte's export conditions.
if (!sdkDir && installed("@langchain", "svelte")) {
  const { default: sveltePlugin } = await import(
    join(external ?? join(pkg, "node_modules"), "esbuild-svelte", "dist", "index.mjs")
  );
  await build({
    entryPoints: [join(here, "svelte.js")],
    bundle: true,
    format: "esm",
    outdir,
    nodePaths,
    conditions: ["svelte", "browser"],
    mainFields: ["svelte", "browser", "module", "main"],
    plugins: [sveltePlugin({ compilerOptions: { css: "injected" } })],
    define: { "process.env.NODE_ENV": '"production"' },
    ...SMALL,
    logLevel: "warning",
  });
  PAGES.svelte = "svelte";
}
for (const [html, name] of Object.entries(PAGES)) {
  writeFileSync(
    join(outdir, `${html}.html`),
    `<!doctype html><meta charset="utf-8"><title>chat</title><div id="root"></div><script type="module" src="${name}.js"></script>\n`,
  );
}
// Which SDK went into the pages (sdk.json), so a test can check the matrix is real.
// (The binding's own nested copy is not the one under test.)
const sdkFile = Object.keys(metafile.inputs).find(
  (path) => path.includes("@langchain/langgraph-sdk/dist/") && !path.includes("@langchain/react/"),
);
const sdkRoot = sdkFile.slice(0, sdkFile.indexOf("/dist/"));
const { version } = JSON.parse(readFileSync(resolve(sdkRoot, "package.json"), "utf8"));
writeFileSync(join(outdir, "sdk.json"), JSON.stringify({ version }) + "\n");
console.log(outdir);
