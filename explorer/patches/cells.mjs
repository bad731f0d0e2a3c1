// Candela Explorer, in the browser: a figure's cells painted with one fill per colour.
//
// Bokeh paints a Rect glyph one rectangle at a time: a path, a fill style built as a
// CSS string and parsed by the canvas, and a fill, for each of 4,096 cells; that was
// most of a figure's repaint. The explorer's cells are axis-aligned rectangles with no
// stroke, no hatch and no rounded corners, and they never overlap (each fills 0.9 of
// its cell), so the order they are painted in changes nothing: here the cells of one
// colour are one path, filled once with the style Bokeh itself sets for that colour.
// The pixels are Bokeh's, but for a shade where the anti-aliased edges of two cells of
// one colour share a pixel of the gap between them (tests/explorer/test_browser.py).
// Only glyphs whose model carries the tag below are painted so, and only while they
// are drawn that simply; anything else is Bokeh's own painting.
//
// No component of its own: this file comes first in the module of the explorer's
// keyboard component (explorer/keys.py), whose render() calls cells(). Installing
// twice is a no-op.

const CELLS_TAG = "candela-cells"

// Drawn simply: no stroke, no hatch, no angle, no rounded corners (`d`: the view's
// mapped columns, as Bokeh's own _paint reads them).
function plainRects(visuals, d) {
  const {line, hatch} = visuals
  const {angle, border_radius: r} = d
  return !line.doit && !hatch.doit && angle?.is_Scalar?.() && angle.value === 0 &&
    r != null && !r.top_left && !r.top_right && !r.bottom_right && !r.bottom_left
}

function cells(Bokeh) {
  const RectView = Bokeh?.Models?.get?.("Rect")?.prototype?.default_view
  if (RectView == null || RectView.prototype.__candelaCells) return
  if (typeof RectView.prototype._paint !== "function") {
    console.warn("candela: patch cells left off: Bokeh's RectView has no _paint")
    RectView.prototype.__candelaCells = "off"
    return
  }
  const paint = RectView.prototype._paint
  RectView.prototype.__candelaCells = true
  RectView.prototype._paint = function (ctx, indices, data) {
    if (!this.model.tags?.includes?.(CELLS_TAG)) return paint.call(this, ctx, indices, data)
    const d = {...this, ...data}
    if (!plainRects(this.visuals, d)) return paint.call(this, ctx, indices, data)
    const {fill} = this.visuals
    const {sx0, sy1, swidth, sheight} = d
    // The cells of each fill, by colour and alpha (a packed RGBA colour is a number).
    const groups = new Map()
    for (const i of indices) {
      const x = sx0[i], y = sy1[i], w = swidth[i], h = sheight[i]
      if (!isFinite(x + y + w + h) || w == 0 || h == 0 || !fill.v_doit(i)) continue
      const color = fill.fill_color.get(i), alpha = fill.fill_alpha.get(i)
      const key = typeof color === "number" && typeof alpha === "number"
        ? color * 1024 + Math.round(alpha * 1000) : `${color}/${alpha}`
      const group = groups.get(key)
      if (group === undefined) groups.set(key, [i])
      else group.push(i)
    }
    for (const group of groups.values()) {
      ctx.beginPath()
      for (const i of group) ctx.rect(sx0[i], sy1[i], swidth[i], sheight[i])
      fill.set_vectorize(ctx, group[0])
      ctx.fill()
    }
  }
}
