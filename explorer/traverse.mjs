// Candela Explorer, in the browser: the traversal animation and hover linking.
//
// Every callback of a view is this one module; the model that called it says what
// happened (a button, a slider, the frames source, a hover tool): see `actionOf`.
// All frames are precomputed on the server into `args.frames` (one row per
// logical element in walk order: pos, prev, axis, delta); row k of
// `args.logical` is logical element k (its cell: what the shape decides) and row p
// of `args.buffer` is buffer position p, so a frame is a few array reads and no
// server round trip.
// Play state lives on this view's own frames source object: every explorer (and
// every view of one) has its own, and a new document (a reload, a kernel restart)
// starts afresh. Model ids are not used: they repeat across documents.

function stateOf(args) {
  return (args.frames.__candela ??= {
    timer: null, fps: 0, frame: 0, sliderAt: 0, moving: false, data: null,
    // The cells each mark frames, per figure: [x, y, k, pos] each.
    marks: {logical: {link: [], hover: [], cursor: []}, buffer: {link: [], hover: [], cursor: []},
      cost: {link: [], hover: [], cursor: []}},
  })
}

// What happened, from the model that called: the frames source's data is new
// frames from the server (reset); the same data with new tags is a new unit,
// ring size or concealment (redraw).
function actionOf(args, obj, st) {
  switch (obj?.origin ?? obj) { // a click comes as the event, its origin the button
    case args.back: return "back"
    case args.play: return "toggle"
    case args.step: return "forward"
    case args.slider: return "scrub"
    case args.speed: return "speed"
    case args.hover_logical: return "hover-logical"
    case args.hover_buffer: return "hover-buffer"
    case args.buffer:
      // The buffer's cells placed anew (a lane wrapped otherwise): the same walk.
      return "redraw"
    case args.frames:
      if (obj.data !== st.data) {
        st.data = obj.data
        return "reset"
      }
      return "redraw"
  }
  return null
}

function tagsOf(args) {
  return args.frames.tags?.[0] ?? {}
}

// The frames' rows of one figure (figures.mark_rows builds the same on the server).
const MARK_ORDER = ["link", "hover", "cursor"]
const DEFAULT_RINGS = {size: 0.97, rings: [["#000000", 7], ["#FFFFFF", 5], [null, 3]]}
// A second view's links (two_views.LINK_JS): the cells reading the hovered position.
const LINK_RINGS = {size: 1.0, rings: [["#009E73", 3]]}

function paintMarks(args, st, fig) {
  const rows = {x: [], y: [], size: [], line: [], color: [], mark: [], ring: [], k: [], pos: []}
  const spec = tagsOf(args).rings?.[fig] ?? {}
  for (const mark of MARK_ORDER) {
    const {size, rings} = spec[mark] ?? (mark === "link" ? LINK_RINGS : DEFAULT_RINGS)
    for (const [x, y, k, pos] of st.marks[fig][mark]) {
      rings.forEach(([color, width], ring) => {
        rows.x.push(x); rows.y.push(y); rows.size.push(size); rows.line.push(width)
        rows.color.push(color); rows.mark.push(mark); rows.ring.push(ring)
        rows.k.push(k); rows.pos.push(pos)
      })
    }
  }
  setData(args[`marks_${fig}`], rows)
}

// A source's data, set only when some column differs: a new object repaints the figure's
// overlay layer, and a new walk starting where the last one did (a transpose of the same
// shape) draws its first frame as it was. A layer painted is a canvas the browser copies
// to the screen again (at 4,096 cells, over a megapixel each).
function setData(source, rows) {
  const old = source.data
  const same = (a, b) => a != null && a.length === b.length && b.every((v, i) => a[i] === v)
  const keys = Object.keys(rows)
  if (keys.length === Object.keys(old).length && keys.every((k) => same(old[k], rows[k]))) return
  source.data = rows
}

const noJump = () => ({x0: [], y0: [], x1: [], y1: [], cx0: [], cy0: [], cx1: [], cy1: [], color: []})

function setMarks(args, st, mark, logical, buffer) {
  st.marks.logical[mark] = logical
  st.marks.buffer[mark] = buffer
  paintMarks(args, st, "logical")
  paintMarks(args, st, "buffer")
}

// The cost panel's unit that holds buffer position `pos` (the walk's current element),
// lit as the buffer's cell is: unit floor(pos * itemsize / unit), a cell of `args.units`
// (explorer.cost_view). None while the panel draws no units (or withholds them).
function costUnit(args, st, pos) {
  const cost = tagsOf(args).cost
  const units = args.units
  let cells = []
  if (units != null && cost != null && pos != null && pos >= 0) {
    const u = Math.floor((pos * cost.itemsize) / cost.unit)
    if (u < units.data.x.length) cells = [[units.data.x[u], units.data.y[u], -1, u]]
  }
  st.marks.cost.cursor = cells
  if (args.marks_cost != null) paintMarks(args, st, "cost")
}

// Each figure's text alternative: what it is, and the current element as the odometer
// says it (while a question waits, only that it is hidden, as the odometer is).
function describe(args, text) {
  const tags = tagsOf(args)
  const plain = text.replace(/<[^>]+>/g, "").replace(/&lt;/g, "<").replace(/&amp;/g, "&")
  for (const fig of ["logical", "buffer"]) {
    const label = tags.concealed ? tags.alt?.hidden?.[fig] : `${tags.alt?.[fig] ?? fig}: ${plain}`
    const el = globalThis.Bokeh?.index?.find_one?.(args[`${fig}_figure`])?.el
    if (el != null) {
      el.setAttribute("role", "img")
      el.setAttribute("aria-label", label)
    }
  }
}

// Strides, adj_strides and jumps in the unit the page shows (elements, or bytes).
function unitOf(args) {
  const tag = args.frames.tags?.[0]
  return {scale: Number(tag?.scale) || 1, bytes: tag != null && tag.unit !== "elements"}
}

// The buffer position(s) of a step, as figures.position_text writes them: in bytes once a
// byte unit is chosen, with the buffer cell (counted in elements) beside.
export function positionText(unit, prev, pos) {
  const moved = (a, b, f) => (a == null ? `<b>${f(b)}</b>` : `${f(a)} → <b>${f(b)}</b>`)
  if (!unit.bytes) return `position ${moved(prev, pos, (p) => p)}`
  return `position ${moved(prev, pos, (p) => p * unit.scale)} bytes ` +
    `(cell ${prev == null ? pos : `${prev} → ${pos}`})`
}

const PLAY = "▶ play"
// What the odometer says while a question withholds the walk, or the rest of it.
const WALK_WITHHELD = "the walk plays once the question is answered"
const NEXT_WITHHELD = "the next step shows once the question is answered"
const PAUSE = "❚❚ pause"

const count = (args) => args.frames.data.pos.length

function clamp(k, n) {
  return Math.max(0, Math.min(n - 1, k))
}

function escape(text) {
  return String(text).replace(/&/g, "&amp;").replace(/</g, "&lt;")
}

// Writing `odometer.text` re-renders the Div and lays the traversal panel out again,
// which cost three times a whole frame of cells at 4,096 cells. So while playing, write
// the Div's own element and the model (which tests and scripts read) with the slider,
// at most every 100 ms; `sync` writes the model now.
function setOdometer(args, html, sync) {
  const odometer = args.odometer
  describe(args, html)
  if (!sync) {
    const el = globalThis.Bokeh?.index?.find_one?.(odometer)?.markup_el
    if (el != null) {
      el.innerHTML = html
      return
    }
  }
  odometer.text = html
}

// Draw frame k: both cursors, the jump arc over the buffer and the odometer.
export function render(args, k, sync = true) {
  const {logical, buffer, frames, jump} = args
  const st = stateOf(args)
  const n = count(args)
  // While a question waits the frames stop before the asked jump (fewer than the cells).
  const total = logical.data.x.length
  if (n === 0 || total < n) {
    setMarks(args, st, "cursor", [], [])
    costUnit(args, st, null)
    setData(jump, noJump())
    if (n === 0) {
      const text = total > 0 ? WALK_WITHHELD : "no elements to walk"
      setOdometer(args, `<span class="candela-odometer" role="status">${text}</span>`, true)
    }
    return
  }
  k = clamp(k, n)
  const pos = frames.data.pos[k]
  const prev = frames.data.prev[k]
  const axis = frames.data.axis[k]
  const delta = frames.data.delta[k]
  setMarks(args, st, "cursor", [[logical.data.x[k], logical.data.y[k], k, pos]],
    [[buffer.data.x[pos], buffer.data.y[pos], k, pos]])
  // A summarised walk's `pos` is a bin of positions: the panel then draws no units.
  costUnit(args, st, frames.data.at ? null : pos)

  if (k > 0 && delta !== 0) {
    const x0 = buffer.data.x[prev], row0 = buffer.data.y[prev]
    const x1 = buffer.data.x[pos], row1 = buffer.data.y[pos]
    let y0, y1, cy
    if (row0 === row1) {
      // Within a row: an arc above it, higher for a longer jump.
      y0 = y1 = row0 + 0.45
      cy = y0 + 0.6 + Math.min(2.5, 0.12 * Math.abs(x1 - x0))
    } else {
      // Between wrapped rows: leave the cell on the side facing the target row and run
      // through the gap next to it, not across the cells of the row in between.
      const up = row1 > row0
      y0 = row0 + (up ? 0.45 : -0.45)
      y1 = row1 + (up ? -0.45 : 0.45)
      cy = row0 + (up ? 0.75 : -0.75) // the middle of that gap (rows lie 1.5 apart)
    }
    jump.data = {
      x0: [x0], y0: [y0], x1: [x1], y1: [y1],
      cx0: [x0], cy0: [cy], cx1: [x1], cy1: [cy],
      color: [delta < 0 ? args.backward : args.forward],
    }
  } else {
    setData(jump, noJump())
  }

  const index = escape(logical.data.index[k])
  const unit = unitOf(args)
  // A summarised grid (columns.overview_columns) walks only the drawn elements: its
  // frames hold each one's true position (`at`), its number in the whole walk (`flat`)
  // and how many elements the step from the drawn one before passes over (`skip`).
  const at = frames.data.at
  const here = at ? at[k] : pos
  const before = at ? at[Math.max(k - 1, 0)] : prev
  const skip = frames.data.skip?.[k] ?? 0
  const elements = Number(tagsOf(args).elements ?? total)
  const number = frames.data.flat ? frames.data.flat[k] + 1 : k + 1
  let step
  if (k === 0) {
    step = `start at the offset: ${positionText(unit, null, here)}`
  } else {
    const sign = delta >= 0 ? "+" : "−"
    const word = delta < 0 ? "backward" : delta === 0 ? "stays" : "forward"
    const amount = `${sign}${Math.abs(delta) * unit.scale}${unit.bytes ? " bytes" : ""}`
    const how = skip > 0
      ? `moved on past ${skip.toLocaleString("en")} element${skip === 1 ? "" : "s"} not drawn · ` +
        `<span class="candela-odometer-delta">${amount}</span> (${word})`
      : `stepped · <span class="candela-odometer-delta">${amount}</span> = ` +
        `adj_stride[${axis}] (${word})`
    step = `axis <span class="candela-odometer-axis">${axis}</span> ${how} · ` +
      `${positionText(unit, before, here)}`
  }
  const more = k === n - 1 && n < total ? ` · ${NEXT_WITHHELD}` : ""
  const of = elements === total ? `${total}` : `${elements.toLocaleString("en")} (${total} drawn)`
  setOdometer(args,
    `<span class="candela-odometer" role="status">element ${number.toLocaleString("en")} ` +
    `of ${of} · index <b class="candela-odometer-index">${index}</b> · ${step}${more}</span>`,
    sync)
}

function stop(args, st) {
  if (st.timer !== null) {
    cancelAnimationFrame(st.timer)
    st.timer = null
  }
  if (args.play.label !== PLAY) args.play.label = PLAY
}

// Show frame k and move the scrub slider to it. Redrawing the slider costs more
// than a whole frame of cells, so while playing it (and the odometer's model text)
// follows at most every 100 ms.
function show(args, st, k, force) {
  st.frame = clamp(k, count(args))
  const now = performance.now()
  const sync = force || now - st.sliderAt >= 100
  render(args, st.frame, sync)
  if (sync) {
    st.sliderAt = now
    st.moving = true
    args.slider.value = st.frame
    st.moving = false
  }
}

// Play at `speed` frames of the walk per second, paced by the clock: when the
// browser paints slower than the speed, a paint advances more than one frame.
function play(args, st) {
  stop(args, st)
  const n = count(args)
  if (n <= 1) return
  args.play.label = PAUSE
  if (st.frame >= n - 1) show(args, st, 0, true)
  const fps = Math.max(1, Number(args.speed.value) || 1)
  const start = performance.now()
  const first = st.frame
  st.fps = fps
  const tick = (now) => {
    const last = count(args) - 1
    const target = Math.min(last, first + Math.floor(((now - start) * fps) / 1000))
    if (target > st.frame) show(args, st, target, target >= last)
    if (st.frame >= last) {
      st.timer = null
      args.play.label = PLAY
    } else {
      st.timer = requestAnimationFrame(tick)
    }
  }
  st.timer = requestAnimationFrame(tick)
}

function hoverLogical(args, st, indices) {
  const {logical, buffer, frames} = args
  if (indices.length === 0 || frames.data.pos.length > logical.data.x.length) {
    setMarks(args, st, "hover", [], [])
    return
  }
  const k = indices[0]
  if (k >= frames.data.pos.length) { // past a withheld walk: the cell, not where it reads
    setMarks(args, st, "hover", [[logical.data.x[k], logical.data.y[k], k, -1]], [])
    return
  }
  const pos = frames.data.pos[k]
  setMarks(args, st, "hover", [[logical.data.x[k], logical.data.y[k], k, pos]],
    [[buffer.data.x[pos], buffer.data.y[pos], -1, pos]])
}

function hoverBuffer(args, st, indices) {
  const {logical, buffer, frames} = args
  if (indices.length === 0 || frames.data.pos.length > logical.data.x.length) {
    setMarks(args, st, "hover", [], [])
    return
  }
  const p = indices[0]
  const cells = []
  const pos = frames.data.pos
  for (let k = 0; k < pos.length; k++) {
    if (pos[k] === p) cells.push([logical.data.x[k], logical.data.y[k], k, p])
  }
  setMarks(args, st, "hover", cells, [[buffer.data.x[p], buffer.data.y[p], -1, p]])
}

export default function (args, obj, data) {
  const st = stateOf(args)
  // a second view's links paint their rings on this grid through this view's marks
  st.paintLinks ??= (cells) => {
    st.marks.logical.link = cells
    paintMarks(args, st, "logical")
  }
  const slider = args.slider
  const n = count(args)
  switch (actionOf(args, obj, st)) {
    case "toggle":
      if (st.timer !== null) {
        stop(args, st)
        show(args, st, st.frame, true)
      } else {
        play(args, st)
      }
      break
    case "back":
      stop(args, st)
      show(args, st, st.frame - 1, true)
      break
    case "forward":
      stop(args, st)
      show(args, st, st.frame + 1, true)
      break
    case "scrub":
      if (!st.moving) {
        st.frame = clamp(slider.value, n)
        render(args, st.frame)
      }
      break
    case "speed":
      if (st.timer !== null) play(args, st)
      break
    case "reset":
      // New frames from the server: the other sources may land later in the same
      // message, so draw once the message is applied.
      stop(args, st)
      st.marks.logical.hover = []  // the cells hovered (or linked) belong to the old walk
      st.marks.buffer.hover = []
      st.marks.logical.link = []
      setTimeout(() => show(args, st, 0, true), 0)
      break
    case "redraw":
      // The unit, the rings' size, the concealment or the buffer's places changed: draw
      // the frame again, once the message is applied (the other sources may land later).
      setTimeout(() => {
        render(args, st.frame)
        paintMarks(args, st, "logical")
        paintMarks(args, st, "buffer")
      }, 0)
      // The cost panel's units may land later in the same message (a new unit size).
      setTimeout(() => {
        const k = clamp(st.frame, count(args))
        const pos = args.frames.data.at ? null : args.frames.data.pos[k]
        costUnit(args, st, count(args) > 0 && count(args) <= args.logical.data.x.length ? pos : null)
      }, 0)
      break
    case "hover-logical":
      hoverLogical(args, st, data?.index?.indices ?? [])
      if (args.link != null) args.link.execute(obj, data)  // a second view, when shown
      break
    case "hover-buffer":
      hoverBuffer(args, st, data?.index?.indices ?? [])
      break
  }
}
