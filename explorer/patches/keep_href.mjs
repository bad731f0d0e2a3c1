// Candela Explorer: a page's new URL is not sent back to the server that wrote it.
//
// On a page whose URL an explorer owns (served: the keyboard component's
// `follow_history`), the server writes the URL through Panel's Location model, whose
// view then sends the server the whole new URL (`href`) after each change: a message,
// and 5-10 ms of the server's time an edit, for a value nothing there reads (back and
// forward come as the keyboard component's own messages). Here `href` of each Location
// of that page's document is kept in the page: a change to it is set without syncing.
//
// It changes Panel's Location model of one document, on the instance (its `href`
// property), never its prototype, and only where an explorer follows the history, so a
// notebook's or another app's Location is Panel's own. No component of its own: part of
// the module of the explorer's keyboard component (explorer/keys.py), whose render()
// calls keepHref(Bokeh) for the function to apply to its document. Installing twice on a
// document is a no-op.

function keepHrefInPage(doc) {
  for (const location of doc?.all_models ?? []) {
    if (location.type !== "panel.models.location.Location" || location._candelaHref) continue
    if (location.properties?.href?.get_value == null || typeof location.setv !== "function") {
      console.warn("candela: the page's URL is sent back as Panel sends it (no href property)")
      continue
    }
    try {
      Object.defineProperty(location, "href", {
        get() { return location.properties.href.get_value() },
        set(value) { location.setv({href: value}, {sync: false}) },
        configurable: true,
      })
      location._candelaHref = true
    } catch (error) {
      console.warn("candela: the page's URL is sent back as Panel sends it", error)
    }
  }
}

function keepHref(Bokeh) {
  return keepHrefInPage
}
