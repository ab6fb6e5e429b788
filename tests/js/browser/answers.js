// What the chat pages that render turns rather than message ids (assistant-ui, Svelte)
// show as each turn's answer, read off the DOM as the user sees it: messages are
// `.msg` elements, a user's (`.msg-user`, `.msg-human`) opens a turn, and a turn's
// answer is the text (`.part-text`) after its last tool call (`.part-tool`).

function turnAnswers() {
  const answers = [];
  for (const message of document.querySelectorAll(".msg")) {
    if (message.matches(".msg-user, .msg-human")) {
      answers.push("");
      continue;
    }
    if (answers.length === 0) continue;
    for (const part of message.querySelectorAll(".part-text, .part-tool")) {
      const last = answers.length - 1;
      answers[last] = part.classList.contains("part-tool") ? "" : answers[last] + part.textContent;
    }
  }
  return answers;
}

/** `window.answers()`: each turn's answer now; `window.shownAnswers[turn]`: every answer
 * each turn showed, recorded once per task (before the browser paints). */
export function watchAnswers() {
  window.answers = turnAnswers;
  window.shownAnswers = [];
  const record = () => {
    turnAnswers().forEach((answer, turn) => {
      const seen = (window.shownAnswers[turn] ??= []);
      if (seen[seen.length - 1] !== answer) seen.push(answer);
    });
  };
  new MutationObserver(record).observe(document.getElementById("root") ?? document.body, {
    subtree: true,
    childList: true,
    characterData: true,
  });
}
