// Candela Explorer, in the browser: a text box whose text goes to Python only on Enter.
//
// What is typed stays in the page, in this box's own <input>: no property of any model
// changes per key, so nothing is sent per key, served or in a notebook (where Panel's
// comm sends every change of a synced property, and an explorer shown in two outputs
// had each key copied into the other output's box and back). Enter, or leaving the
// box with its text changed, sets the model's `value`: one message. A new `value` from
// Python (the state changed, in this output or another) is shown unless it is the text
// already there.

// Whether no Python is behind this box: a notebook output (Panel's comm manager is one
// of its document's roots) for which Panel found no comm to a kernel, as in an
// nbconvert HTML export or a notebook viewed without its kernel. A served page talks
// to its server over its WebSocket: it has no comm manager.
function noPython(model) {
  const roots = model.document?.roots?.() ?? []
  const manager = roots.find((root) => root?.properties?.client_comm_id != null)
  if (manager == null) return false
  return globalThis.PyViz?.comms?.[manager.client_comm_id] == null
}

export function render({model, el}) {
  const label = document.createElement("label")
  const title = document.createElement("span")
  title.className = "candela-box-label"
  const input = document.createElement("input")
  input.type = "text"
  input.className = "bk-input candela-box-input"
  input.spellcheck = false
  input.autocomplete = "off"
  const show = () => {
    title.textContent = model.label || ""
    title.hidden = !model.label
    input.placeholder = model.placeholder || ""
    input.disabled = Boolean(model.disabled)
    input.title = model.disabled && model.note ? model.note : ""
  }
  show()
  input.value = model.value ?? ""
  label.append(title, input)
  el.append(label)
  if (noPython(model)) {
    // Typing here would change nothing: say so where a person looks, once per explorer
    // (the box with a note), and grey every box out.
    input.disabled = true
    input.placeholder = ""
    input.title = model.offline_note || "no Python behind this page"
    el.classList.add("candela-no-python")
    if (model.offline_note) {
      const note = document.createElement("div")
      note.className = "candela-no-python-note"
      note.setAttribute("role", "note")
      note.textContent = model.offline_note
      el.append(note)
    }
    return
  }
  const apply = () => {
    if (input.disabled || input.value === (model.value ?? "")) return
    model.value = input.value
    // Then an event, as Panel's own text input sends one on Enter: Panel handles a
    // change still pending when an event of its component comes in a callback of its
    // own, outside Bokeh's document lock, where all the edit changes is sent back as one
    // message. (Handled inside the lock, Panel 1.10 lets Bokeh send each change as a
    // message of its own: nine an edit.)
    model.send_msg("applied")
  }
  input.addEventListener("change", apply) // Enter in a page, or leaving the box
  // A notebook takes Enter's keydown for its own (no change event comes): Enter applies.
  input.addEventListener("keydown", (event) => { if (event.key === "Enter") apply() })
  input.addEventListener("keyup", (event) => { if (event.key === "Enter") apply() })
  model.on("value", () => {
    const text = model.value ?? ""
    if (input.value !== text) input.value = text
  })
  model.on(["label", "placeholder", "disabled", "note"], show)
}
