// Candela Explorer, in a notebook: a change the kernel has not heard of is sent on.
//
// In a notebook Panel sends the page's changes to the kernel through a comm, one
// message at a time: while it waits for the kernel's acknowledgement of the last one
// it holds new changes, and sends them when the acknowledgement comes, or else with
// the next change made after its `timeout` (5 s). In JupyterLab an acknowledgement of
// a message sent while "Run All" still ran sometimes never came: the changes held
// then (a pipeline typed and Enter pressed) stayed in the page, unsent, until the next
// change, and the kernel never drew them. Here a change held for more than
// FLUSH_AFTER_MS is sent without the acknowledgement; the kernel handles messages in
// order, so sending one before the last is acknowledged changes nothing else.
//
// Only the comm of an output that holds an explorer (its keyboard component, by the CSS
// class below) is changed: every other Panel output on the page keeps Panel's own.
//
// No component of its own: part of the module of the explorer's keyboard component
// (explorer/keys.py), whose render() calls notebookComm(). It changes Panel's
// CommManager model (absent from a served page). Installing twice is a no-op.

const FLUSH_AFTER_MS = 1000
const EXPLORER_KEYS_CLASS = "candela-keys-help"

// Whether a CommManager's document (one notebook output) holds an explorer.
function explorersComm(manager) {
  if (manager._candelaOurs) return true
  const models = manager.document?._all_models?.values?.()
  for (const model of models ?? []) {
    if (model.css_classes?.includes?.(EXPLORER_KEYS_CLASS)) {
      manager._candelaOurs = true // an explorer, once drawn, stays in its output
      return true
    }
  }
  return false
}

function notebookComm(Bokeh) {
  let manager
  try {
    manager = Bokeh?.Models?.get?.("panel.models.comm_manager.CommManager")?.prototype
  } catch (error) {
    return // not a notebook's page
  }
  if (manager == null || manager._candelaFlush) return // a served page has no CommManager
  const gone = ["_document_changed", "process_events"].filter(
    (name) => typeof manager[name] !== "function")
  if (gone.length > 0) {
    console.warn(`candela: patch notebook_comm left off: Panel's CommManager has no ${gone.join(", ")}`)
    manager._candelaFlush = "off"
    return
  }
  const changed = manager._document_changed
  manager._document_changed = function (event) {
    changed.call(this, event)
    if (!this._blocked || !(this._event_buffer?.length > 0) || this._candelaTimer != null) return
    if (!explorersComm(this)) return // another Panel output: Panel's own timing
    const wait = Math.max(0, Math.min(this._timeout - Date.now(), FLUSH_AFTER_MS))
    this._candelaTimer = setTimeout(() => {
      this._candelaTimer = null
      if (this._blocked && this._event_buffer.length > 0) {
        this._timeout = Date.now() + this.timeout
        this.process_events()
      }
    }, wait)
  }
  manager._candelaFlush = true
}
