// Candela Explorer, in the browser: the keyboard of the classroom.
//
// One window-wide keydown listener per page: ArrowLeft / ArrowRight step the
// traversal, Space plays and pauses it, n / p go to the next / previous lesson
// step. The traversal keys press the page's own Bokeh buttons (found by name in
// this component's document), so they run exactly what a click runs in
// traverse.mjs, with no server round trip; n / p go to the server as a message,
// since the lesson lives there. Nothing fires while the student types in a text
// box, picks from a list or drags a slider, or with Ctrl, Alt or Meta held.
// The server starts the reveal by raising `play_count`.

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

export function render({model, view}) {
  const doc = () => view.model.document
  const named = (name) => (doc() ? doc().get_model_by_name(name) : null)

  // Click a Bokeh button of the traversal as the mouse would.
  const press = (name) => {
    const button = named(name)
    const found = button && globalThis.Bokeh ? globalThis.Bokeh.index.find_one(button) : null
    if (found) found.click()
    return found != null
  }

  // traverse.mjs keeps its play state in a Map keyed by the frames source.
  const playing = () => {
    const frames = named("frames-source")
    const st = frames ? globalThis.__candelaTraverse?.get(frames.id) : undefined
    return st != null && st.timer != null
  }

  const onKey = (event) => {
    if (event.defaultPrevented || event.ctrlKey || event.altKey || event.metaKey) return
    if (!view.el || !view.el.isConnected) return
    const target = targetOf(event)
    if (isTyping(target)) return
    switch (event.key) {
      case "ArrowRight":
        press("forward-button")
        break
      case "ArrowLeft":
        press("back-button")
        break
      case " ":
      case "Spacebar":
        if (isPressable(target)) return
        press(playing() ? "pause-button" : "play-button")
        break
      case "n":
      case "N":
        model.send_msg({key: "next"})
        break
      case "p":
      case "P":
        model.send_msg({key: "previous"})
        break
      default:
        return
    }
    event.preventDefault()
  }

  // Back and forward change the URL but Panel's Location does not tell the server:
  // load the page the URL now names, so the state follows it.
  const onPop = () => {
    if (model.follow_history) window.location.reload()
  }

  window.addEventListener("keydown", onKey)
  window.addEventListener("popstate", onPop)
  model.on("remove", () => {
    window.removeEventListener("keydown", onKey)
    window.removeEventListener("popstate", onPop)
  })
  model.on("play_count", () => press("play-button"))

  const help = document.createElement("div")
  help.className = "candela-keys"
  help.innerHTML =
    "keys: <kbd>←</kbd> <kbd>→</kbd> step the walk · <kbd>space</kbd> play / pause · " +
    "<kbd>n</kbd> <kbd>p</kbd> next / previous lesson step"
  return help
}
