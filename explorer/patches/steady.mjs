// Candela Explorer, in the browser: figures repaint only when what they show changes.
//
// Bokeh lays a whole page out again whenever any part of it changes size or
// children (a help line, an argument box, the fields), and its PlotView marks
// itself for a full repaint on every such layout, even when its own size and
// frame stay the same ("TODO: invalidating all should imply needs paint" in
// Bokeh 3.9's plot.ts). At 4,096 cells that was a full repaint of both figures
// for a click on the op chooser. Here a layout keeps the plot's paint flags as
// they were: Bokeh's own after-layout check still repaints when the canvas or
// the frame moved or changed size, and every data, range or glyph change still
// requests its paint as before. Only plots whose model carries the tag below
// are touched, so other Bokeh plots on a notebook page behave as Bokeh made them.
//
// No component of its own: this file comes first in the module of the explorer's
// keyboard component (explorer/keys.py), whose render() calls steady() — a component
// costs every session two Bokeh models. Installing twice is a no-op.

const STEADY_TAG = "candela-steady"

function steady(Bokeh) {
  const PlotView = Bokeh?.Models?.get?.("Plot")?.prototype?.default_view
  if (PlotView == null || PlotView.prototype.__candelaSteady) return
  // Every method replaced must be Bokeh's, or the patch leaves Bokeh alone (one line).
  const gone = ["_update_layout", "invalidate_layout", "_after_layout"].filter(
    (name) => typeof PlotView.prototype[name] !== "function")
  if (gone.length > 0) {
    console.warn(`candela: patch steady left off: Bokeh's PlotView has no ${gone.join(", ")}`)
    PlotView.prototype.__candelaSteady = "off"
    return
  }
  const update = PlotView.prototype._update_layout
  const invalidate = PlotView.prototype.invalidate_layout
  PlotView.prototype.__candelaSteady = true
  // A new shape changes a figure's width, height and ranges in one message, which
  // Bokeh applies one property at a time: each laid the page out and painted the plot
  // again. Once the message is applied (a microtask later) is soon enough, and once.
  PlotView.prototype.invalidate_layout = function () {
    if (!this.model.tags?.includes?.(STEADY_TAG)) return invalidate.call(this)
    if (this.__candelaLayout) return
    this.__candelaLayout = true
    queueMicrotask(() => {
      this.__candelaLayout = false
      invalidate.call(this)
    })
  }
  // After a layout Bokeh paints a plot whose size changed at once, in the middle of
  // the message that changed it: its new columns are still on their way into the
  // glyphs (a chain of promises), which then ask for a second paint. Asked for the next
  // frame instead, the layout's paint and theirs are one.
  const afterLayout = PlotView.prototype._after_layout
  PlotView.prototype._after_layout = function () {
    if (!this.model.tags?.includes?.(STEADY_TAG)) return afterLayout.call(this)
    this.paint = () => this.schedule_paint()
    try {
      afterLayout.call(this)
    } finally {
      delete this.paint // the prototype's again
    }
  }
  // Bokeh looks for a plot's outline, background and border colours in CSS variables
  // (--bk-outline-line-color, ...) before its own properties, with getComputedStyle, on
  // every layout and paint. After an edit the page's styles are dirty (new text in the
  // fields), so each look forced a style recalculation of the whole page: ~20 ms, more
  // than once an edit. Neither Bokeh, Panel nor the explorer sets those variables: a
  // tagged plot's visuals go straight to their properties.
  const Visual = Bokeh.require?.("core/visuals/visual")?.VisualProperties
  if (Visual != null && !Visual.prototype.__candelaSteady &&
      typeof Visual.prototype._get_css_value === "function") {
    const cssValue = Visual.prototype._get_css_value
    Visual.prototype.__candelaSteady = true
    Visual.prototype._get_css_value = function (name) {
      if (this.obj?.model?.tags?.includes?.(STEADY_TAG)) return ""
      return cssValue.call(this, name)
    }
  }
  PlotView.prototype._update_layout = function () {
    const needsPaint = this._needs_paint
    const invalidateAll = this._invalidate_all
    update.call(this)
    if (this.model.tags?.includes?.(STEADY_TAG)) {
      this._needs_paint = needsPaint
      this._invalidate_all = invalidateAll
    }
  }
}
