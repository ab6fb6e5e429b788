// Message text as langchain_core's `message.text` and the route's extraction see it:
// text blocks joined, reasoning blocks and a leading inline <think> excluded; and
// chunk merging as `AIMessageChunk + AIMessageChunk` does.

const LEADING_THINK = /^\s*<think>([\s\S]*?)(?:<\/think>|$)\s*/;

/** Split a leading inline `<think>…</think>` (an unclosed one swallows the rest). */
export function splitThink(text) {
  const match = LEADING_THINK.exec(text);
  if (!match) return [text, ""];
  return [text.slice(match[0].length), match[1].trim()];
}

/** Text of a message's content: a string as is; else `text` blocks (and bare strings) joined. */
export function contentText(content) {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  let out = "";
  for (const block of content) {
    if (typeof block === "string") out += block;
    else if (block && block.type === "text" && typeof block.text === "string") out += block.text;
  }
  return out;
}

/** The user-visible text: text blocks joined, reasoning blocks and inline think removed. */
export function answerText(content) {
  return splitThink(contentText(content))[0];
}

function summaryTexts(summary) {
  if (!Array.isArray(summary)) return [];
  return summary
    .filter((item) => item && typeof item.text === "string" && item.text)
    .map((item) => item.text);
}

/**
 * Every piece of reasoning a message carries, joined by blank lines, where the route's
 * extraction finds it: LC v1 `reasoning` blocks (or an OpenAI summary), Anthropic
 * `thinking`, `additional_kwargs.reasoning_content`, and a leading inline `<think>`.
 */
export function reasoningText(message) {
  if (!message || typeof message !== "object") return "";
  const parts = [];
  const blocks = Array.isArray(message.content) ? message.content : [];
  let reasoningBlock = false;
  for (const block of blocks) {
    if (!block || typeof block !== "object") continue;
    if (block.type === "reasoning") {
      reasoningBlock = true;
      if (typeof block.reasoning === "string" && block.reasoning) parts.push(block.reasoning);
      else parts.push(...summaryTexts(block.summary));
    } else if (block.type === "thinking" && typeof block.thinking === "string" && block.thinking) {
      parts.push(block.thinking);
    }
  }
  const extra = message.additional_kwargs && message.additional_kwargs.reasoning_content;
  if (!reasoningBlock && typeof extra === "string" && extra) parts.push(extra);
  const inline = splitThink(contentText(message.content))[1];
  if (inline) parts.push(inline);
  return parts.join("\n\n");
}

function mergeDicts(left, right) {
  const merged = { ...left };
  for (const [key, value] of Object.entries(right)) {
    const current = merged[key];
    if (!(key in merged) || (value != null && current == null)) merged[key] = value;
    else if (value == null) continue;
    else if (typeof current === "string" && typeof value === "string") {
      if (key === "index" && current.startsWith("lc_")) continue;
      if (["id", "output_version", "model_provider"].includes(key) && current === value) continue;
      merged[key] = current + value;
    } else if (Array.isArray(current) && Array.isArray(value)) {
      merged[key] = mergeLists(current, value);
    } else if (typeof current === "object" && typeof value === "object") {
      merged[key] = mergeDicts(current, value);
    } else if (typeof current === "number" && typeof value === "number") {
      merged[key] = ["index", "created", "timestamp"].includes(key) ? value : current + value;
    }
  }
  return merged;
}

function mergeLists(left, right) {
  const merged = [...left];
  for (const item of right) {
    const mergeable =
      item &&
      typeof item === "object" &&
      (Number.isInteger(item.index) ||
        (typeof item.index === "string" && item.index.startsWith("lc_")));
    const at = mergeable
      ? merged.findIndex(
          (prev) =>
            prev &&
            typeof prev === "object" &&
            prev.index === item.index &&
            (!prev.id || !item.id || prev.id === item.id),
        )
      : -1;
    if (at === -1) {
      merged.push(item);
    } else {
      const { type: _type, ...rest } = item;
      merged[at] = mergeDicts(merged[at], rest);
    }
  }
  return merged;
}

/**
 * Merge two chunks' `content` as langchain's `AIMessageChunk + AIMessageChunk` does:
 * strings concatenate; content blocks with the same `index` merge (their `text` /
 * `reasoning` strings concatenate); other blocks append.
 */
export function mergeContent(left, right) {
  let merged = left == null ? "" : Array.isArray(left) ? [...left] : left;
  if (typeof merged === "string") {
    if (typeof right === "string") return merged + right;
    return [merged, ...(right || [])];
  }
  if (Array.isArray(right)) return mergeLists(merged, right);
  if (merged.length && typeof merged[merged.length - 1] === "string") {
    merged[merged.length - 1] += right;
  } else if (right !== "" && merged.length) {
    merged.push(right);
  }
  return merged;
}
