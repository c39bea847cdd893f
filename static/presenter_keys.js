// kvviz presenter mode: a presentation clicker (or the keyboard) moves through the demo's figures.
// → / PageDown / space: next; ← / PageUp: back. Installed once per browser tab (one document
// listener, however many reruns mount the component); each mount hands it the newest trigger. Keys
// typed into a text box, a menu or a slider are theirs, and a key does nothing outside presenter
// mode (the component, keyed "demos_keys", is on the page only there).
const NEXT = new Set(["ArrowRight", "PageDown", " ", "Spacebar"]);
const PREV = new Set(["ArrowLeft", "PageUp"]);
const OWN = 'input, textarea, select, [contenteditable="true"], [role="combobox"], [role="slider"], [role="listbox"], [role="option"]';

function onKey(e) {
  const fire = window.__kvvizKeysTrigger;
  if (!fire || !document.querySelector(".st-key-demos_keys")) return;
  if (e.ctrlKey || e.metaKey || e.altKey || e.isComposing) return;
  const target = e.target;
  if (target && target.closest && target.closest(OWN)) return;
  const move = NEXT.has(e.key) ? "next" : PREV.has(e.key) ? "prev" : null;
  if (!move) return;
  e.preventDefault();                    // no page scroll, no click of a focused button by space
  e.stopPropagation();
  window.__kvvizKeysSeq = (window.__kvvizKeysSeq || 0) + 1;
  fire("key", { move, seq: window.__kvvizKeysSeq });
}

export default function (component) {
  window.__kvvizKeysTrigger = component.setTriggerValue;
  if (!window.__kvvizKeysInstalled) {
    window.__kvvizKeysInstalled = true;
    document.addEventListener("keydown", onKey, true);
  }
  return undefined;
}
