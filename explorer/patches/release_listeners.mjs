// Candela Explorer, in the browser: a removed view takes its page-wide listeners with it.
//
// BokehJS 3.9 adds listeners to the page's window, document and visualViewport that
// it never removes: every PlotView listens for the visual viewport's "resize"
// (plot_canvas.ts, connect_signals), every input widget with a description for the
// document's "mousedown" and the window's "blur" (input_widget.ts,
// _build_description_el, again at each render). Each listener's closure holds its
// view, the view its model, the model its whole document: in a notebook, every output
// an explorer ever drew stayed in the page's memory after JupyterLab cleared it (its
// cell run again), about 2 MB a time. Here the listeners those methods add to the
// window, the document and the visual viewport, for a view inside an explorer (a
// model with the class below, or one of its children), are written down on the view
// and removed when the view is (Bokeh's View.prototype.remove, which every view's
// remove ends in), so other Bokeh plots and widgets on a page behave as Bokeh made them.
// When the removed view is an output's root (in a notebook), Panel's CommManager of
// that output's document also leaves `window.PyViz.shared_views` (Panel adds each
// there and never takes it out) and drops the changes it buffered for a comm that is
// gone.
//
// No component of its own: part of the module of the explorer's keyboard component
// (explorer/keys.py), whose render() calls releaseListeners(). Installing twice is a
// no-op.

const RELEASE_CLASS = "candela-explorer"

function inExplorer(view) {
  for (let v = view; v != null; v = v.parent) {
    if (v.model?.css_classes?.includes?.(RELEASE_CLASS)) return true
  }
  return false
}

let releaseRecording = null  // the view whose listeners are being written down

// `method`, run so that the listeners it adds to the page's window, document or
// visual viewport are written down on the view it runs on (for an explorer's view).
function recordingListeners(method) {
  return function (...args) {
    if (releaseRecording != null || !inExplorer(this)) return method.apply(this, args)
    const view = this
    const targets = [window, document, window.visualViewport].filter((t) => t != null)
    const own = targets.map((t) => Object.getOwnPropertyDescriptor(t, "addEventListener"))
    for (const target of targets) {
      target.addEventListener = function (type, listener, options) {
        (view.__candelaListeners ??= []).push([this, type, listener, options])
        return EventTarget.prototype.addEventListener.call(this, type, listener, options)
      }
    }
    releaseRecording = view
    try {
      return method.apply(this, args)
    } finally {
      releaseRecording = null
      targets.forEach((target, i) => {
        if (own[i] == null) delete target.addEventListener
        else Object.defineProperty(target, "addEventListener", own[i])
      })
    }
  }
}

const COMM_MANAGER = "panel.models.comm_manager.CommManager"

// A notebook output whose root view is removed (JupyterLab cleared it): its Panel
// CommManager lets go of the page's registries that would keep it, and with it the
// whole document, for the rest of the page's life.
function releaseComms(doc) {
  const models = [...(doc?.all_models ?? [])]
  if (!models.some((m) => m.css_classes?.includes?.(RELEASE_CLASS))) return
  const pyviz = window.PyViz
  for (const manager of models) {
    if (manager.type !== COMM_MANAGER) continue
    manager._event_buffer = []
    const shared = pyviz?.shared_views?.get?.(manager.plot_id)
    if (Array.isArray(shared)) {
      const rest = shared.filter((m) => m !== manager)
      if (rest.length > 0) pyviz.shared_views.set(manager.plot_id, rest)
      else pyviz.shared_views.delete(manager.plot_id)
    }
  }
}

function releaseListeners(Bokeh) {
  const viewOf = (name) => Bokeh?.Models?.get?.(name)?.prototype?.default_view?.prototype
  const ownerOf = (proto, name) => {  // the class in proto's chain that defines `name`
    while (proto != null && !Object.prototype.hasOwnProperty.call(proto, name)) {
      proto = Object.getPrototypeOf(proto)
    }
    return proto
  }
  const plot = viewOf("Plot")
  const input = ownerOf(viewOf("TextInput"), "_build_description_el")
  // Bokeh's View: the last class in the chain that defines remove.
  let view = ownerOf(plot, "remove")
  while (ownerOf(Object.getPrototypeOf(view ?? {}), "remove") != null) {
    view = ownerOf(Object.getPrototypeOf(view), "remove")
  }
  const protos = [plot, input, view]
  if (protos.some((p) => p?.__candelaRelease)) return
  // Every method replaced must be Bokeh's, or the patch leaves Bokeh alone (one line).
  const gone = [
    [plot, "PlotView.connect_signals", "connect_signals"],
    [input, "InputWidgetView._build_description_el", "_build_description_el"],
    [view, "View.remove", "remove"],
  ].filter(([p, , name]) => typeof p?.[name] !== "function").map(([, label]) => label)
  if (gone.length > 0) {
    console.warn(`candela: patch release_listeners left off: Bokeh has no ${gone.join(", ")}`)
    for (const p of protos) if (p != null) p.__candelaRelease = "off"
    return
  }
  for (const p of protos) p.__candelaRelease = true
  plot.connect_signals = recordingListeners(plot.connect_signals)
  input._build_description_el = recordingListeners(input._build_description_el)
  const remove = view.remove
  view.remove = function () {
    const added = this.__candelaListeners
    if (added != null) {
      this.__candelaListeners = null
      for (const [target, type, listener, options] of added) {
        target.removeEventListener(type, listener, options)
      }
    }
    const result = remove.call(this)
    if (this.parent == null) releaseComms(this.model?.document)
    return result
  }
}
