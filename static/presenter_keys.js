// kvviz presenter mode: a presentation clicker (or the keyboard) moves through the demo's figures.
// → / PageDown / space: next; ← / PageUp: back. Installed once per browser tab (one document
// listener, however many reruns mount the component); each mount hands it the newest trigger. Keys
// typed into a text box, a menu or a slider are theirs, and a key does nothing outside presenter
// mode (the component, keyed "demos_keys", is on the page only there).
//
// Streamlit merges the triggers that reach it while a rerun runs, so a clicker's quick presses would
// be lost: every press is logged with a number, a trigger carries the recent log, the page applies
// the presses it has not applied yet and mounts the component again with the last one it applied
// (data.done); only then, or after a second without an answer, is the rest sent.
const NEXT = new Set(["ArrowRight", "PageDown", " ", "Spacebar"]);
const PREV = new Set(["ArrowLeft", "PageUp"]);
const OWN = 'input, textarea, select, [contenteditable="true"], [role="combobox"], [role="slider"], [role="listbox"], [role="option"]';
const K = window;

function flush() {
  const log = K.__kvvizKeysLog || [];
  const last = log.length ? log[log.length - 1][0] : 0;
  if (!K.__kvvizKeysTrigger || last <= (K.__kvvizKeysDone || 0)) return;
  if (K.__kvvizKeysBusy && Date.now() - K.__kvvizKeysBusy < 1000) return;   // the page answers first
  K.__kvvizKeysBusy = Date.now();
  // only the presses not yet applied (a session that started afresh replays nothing older)
  K.__kvvizKeysTrigger("key", { log: log.filter((p) => p[0] > (K.__kvvizKeysDone || 0)) });
  setTimeout(flush, 1050);
}

function onKey(e) {
  if (!K.__kvvizKeysTrigger || !document.querySelector(".st-key-demos_keys")) return;
  if (e.ctrlKey || e.metaKey || e.altKey || e.isComposing) return;
  const target = e.target;
  if (target && target.closest && target.closest(OWN)) return;
  const move = NEXT.has(e.key) ? "next" : PREV.has(e.key) ? "prev" : null;
  if (!move) return;
  e.preventDefault();                    // no page scroll, no click of a focused button by space
  e.stopPropagation();
  K.__kvvizKeysSeq = (K.__kvvizKeysSeq || 0) + 1;
  K.__kvvizKeysLog = (K.__kvvizKeysLog || []).concat([[K.__kvvizKeysSeq, move]]).slice(-32);
  flush();
}

export default function (component) {
  K.__kvvizKeysTrigger = component.setTriggerValue;
  const done = component.data && Number.isInteger(component.data.done) ? component.data.done : 0;
  K.__kvvizKeysDone = Math.max(done, K.__kvvizKeysDone || 0);
  K.__kvvizKeysBusy = 0;
  if (!K.__kvvizKeysInstalled) {
    K.__kvvizKeysInstalled = true;
    document.addEventListener("keydown", onKey, true);
  }
  flush();
  return undefined;
}
