// The Svelte page's entry (Svelte.svelte), bundled by build.mjs with esbuild-svelte.
import { mount } from "svelte";

import Chat from "./Svelte.svelte";
import { watchAnswers } from "./answers.js";

watchAnswers();
mount(Chat, { target: document.getElementById("root") });
