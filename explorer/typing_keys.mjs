// Candela Explorer, in the browser: whether a key belongs to what the person is typing in.
//
// Shared by the live explorer's keyboard (keys.mjs) and the offline lesson page's
// (lesson_page.mjs), each of which has this file put before it in its module: a key
// pressed in a text box, a list or on a slider is the person's, not a shortcut, and
// Space on a button or checkbox is the browser's to press it.

const TEXT_TYPES = new Set([
  "text", "search", "number", "email", "password", "tel", "url", "date", "time", "",
])

// The element the key really went to: window sees only the outermost shadow host.
function targetOf(event) {
  const path = event.composedPath ? event.composedPath() : []
  return path.length ? path[0] : event.target
}

function isTyping(el) {
  if (!el || !el.tagName) return false
  if (el.isContentEditable) return true
  const tag = el.tagName.toUpperCase()
  if (tag === "TEXTAREA" || tag === "SELECT") return true
  if (tag === "INPUT") return TEXT_TYPES.has((el.type || "").toLowerCase())
  const role = el.getAttribute ? el.getAttribute("role") : null
  return role === "slider" || role === "textbox" || role === "listbox" || role === "combobox"
}

// Space on a focused button or checkbox activates it: leave that to the browser.
function isPressable(el) {
  if (!el || !el.tagName) return false
  const tag = el.tagName.toUpperCase()
  if (tag === "BUTTON" || tag === "A" || tag === "SUMMARY") return true
  if (tag === "INPUT") return ["checkbox", "radio", "button", "submit", "reset"].includes(
    (el.type || "").toLowerCase())
  return el.getAttribute && el.getAttribute("role") === "button"
}
