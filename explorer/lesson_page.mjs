// Candela Explorer, in the browser: a lesson as one offline page (lesson_page.py).
//
// Every step of the lesson is precomputed in `args.store.tags[0]` (JSON): its text,
// its drawing (the column data of the grid, the buffer and the walk, the figures'
// sizes, the fields) and its question. A step that asks holds in the clear only what
// it shows while it waits: its verdicts, its reveal and its answered drawing are
// sealed (lesson_page.seal_steps), opened by the right answer (its salted hash is
// checked here, and the same key material unwraps the seal) or by "show me". Showing a step swaps its data into the page's one set of figures;
// traverse.mjs then walks it as in the live explorer. A typed answer is read the
// way explorer.lessons.parse_typed reads it, never evaluated. One callback serves
// the page: the document's "ready" (installs the keys, shows step 1) and every
// control (previous, next, check, Enter in the answer box, show me).

function stateOf(args) {
  const store = args.store
  if (store.__lesson == null) {
    const data = JSON.parse(store.tags[0])
    // A drawing an earlier step holds is sent once: {same: [step, key]} (lesson_page._shared).
    const of = ([i, key]) =>
      key === "challenge" ? data.steps[i].challenge.drawing : data.steps[i][key]
    const owners = data.steps.flatMap((step) => [step, step.challenge]).filter((o) => o != null)
    for (const owner of owners) {
      for (const key of ["drawing", "withheld"]) {
        if (owner[key]?.same != null) owner[key] = of(owner[key].same)
      }
    }
    // ... and a source an earlier drawing holds: {same: [step, key, name]}.
    for (const owner of owners) {
      for (const key of ["drawing", "withheld"]) {
        const sources = owner[key]?.sources ?? {}
        for (const [name, value] of Object.entries(sources)) {
          if (value?.same != null) sources[name] = of(value.same).sources[value.same[2]]
        }
      }
    }
    store.__lesson = {data, i: 0, done: false, last: null, of}
  }
  return store.__lesson
}

// --------------------------------------------------------------------------- sealing

// SHA-256 of bytes (FIPS 180-4), synchronous and in plain JavaScript: the page must work
// from a file or any web host, where crypto.subtle (secure contexts only) may be absent.
const K256 = new Uint32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
])

export function sha256(bytes) {
  const n = bytes.length
  const padded = new Uint8Array(((n + 9 + 63) >> 6) << 6)
  padded.set(bytes)
  padded[n] = 0x80
  const view = new DataView(padded.buffer)
  view.setUint32(padded.length - 8, Math.floor(n / 0x20000000))
  view.setUint32(padded.length - 4, (n << 3) >>> 0)
  const h = new Uint32Array([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
    0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19])
  const w = new Uint32Array(64)
  const rot = (x, r) => (x >>> r) | (x << (32 - r))
  for (let off = 0; off < padded.length; off += 64) {
    for (let t = 0; t < 16; t++) w[t] = view.getUint32(off + 4 * t)
    for (let t = 16; t < 64; t++) {
      const a = w[t - 15], b = w[t - 2]
      w[t] = w[t - 16] + (rot(a, 7) ^ rot(a, 18) ^ (a >>> 3)) + w[t - 7] +
        (rot(b, 17) ^ rot(b, 19) ^ (b >>> 10))
    }
    let [a, b, c, d, e, f, g, k] = h
    for (let t = 0; t < 64; t++) {
      const t1 = k + (rot(e, 6) ^ rot(e, 11) ^ rot(e, 25)) + ((e & f) ^ (~e & g)) + K256[t] + w[t]
      const t2 = (rot(a, 2) ^ rot(a, 13) ^ rot(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))
      k = g; g = f; f = e; e = (d + t1) >>> 0; d = c; c = b; b = a; a = (t1 + t2) >>> 0
    }
    h[0] += a; h[1] += b; h[2] += c; h[3] += d; h[4] += e; h[5] += f; h[6] += g; h[7] += k
  }
  const out = new Uint8Array(32)
  const outView = new DataView(out.buffer)
  for (let t = 0; t < 8; t++) outView.setUint32(4 * t, h[t])
  return out
}

const utf8 = (text) => new TextEncoder().encode(text)
const hexOf = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")
const fromHex = (hex) => new Uint8Array(hex.match(/../g).map((b) => parseInt(b, 16)))
const xor = (a, b) => a.map((v, k) => v ^ b[k])

function concat(...parts) {
  const all = parts.map((p) => (typeof p === "string" ? utf8(p) : p))
  const out = new Uint8Array(all.reduce((n, p) => n + p.length, 0))
  let at = 0
  for (const p of all) { out.set(p, at); at += p.length }
  return out
}

// lesson_page._open_json: check the tag, XOR with SHA-256 in counter mode, inflate (zlib)
// and parse; a promise of null if the key is wrong.
async function openJson(sealed, key) {
  const nonce = fromHex(sealed.nonce)
  const cipher = Uint8Array.from(atob(sealed.data), (c) => c.charCodeAt(0))
  if (hexOf(sha256(concat(key, "tag", nonce, cipher))) !== sealed.tag) return null
  const out = new Uint8Array(cipher.length)
  const block = new Uint8Array(key.length + nonce.length + 4)
  block.set(key)
  block.set(nonce, key.length)
  const counter = new DataView(block.buffer, key.length + nonce.length)
  for (let j = 0; 32 * j < cipher.length; j++) {
    counter.setUint32(0, j)
    const stream = sha256(block)
    for (let k = 0; k < 32 && 32 * j + k < cipher.length; k++) out[32 * j + k] = cipher[32 * j + k] ^ stream[k]
  }
  const inflated = new Blob([out]).stream().pipeThrough(new DecompressionStream("deflate"))
  return JSON.parse(await new Response(inflated).text())
}

// The key material of a typed answer (canonical text) to step i: lesson_page._answer_key.
const answerKey = (st, i, canon) => sha256(utf8(`candela-lesson\x00${st.data.salt}\x00${i}\x00${canon}`))
const partHash = (st, i, k, v) => hexOf(sha256(utf8(`candela-part\x00${st.data.salt}\x00${i}\x00${k}\x00${v}`))).slice(0, 16)
const canonText = (value) => (Array.isArray(value) ? value.join(",") : value)

// A step's secret, opened by a typed answer (its canonical value) or by "show me" (null):
// its verdicts, its reveal, its answered drawing. A promise; of null for a wrong answer.
async function unseal(st, i, value) {
  const step = st.data.steps[i]
  if (step.sealed == null) return null
  let key = null
  if (value === null) {
    key = xor(fromHex(step.sealed.show), sha256(utf8(`candela-show\x00${st.data.salt}\x00${i}`)))
  } else {
    const material = answerKey(st, i, canonText(value))
    const check = hexOf(sha256(concat("check", material)))
    const found = (step.question?.checks ?? []).find((c) => c.hash === check)
    if (found === undefined) return null
    key = xor(fromHex(found.wrap), sha256(concat("key", material)))
  }
  const secret = await openJson(step.sealed, key)
  if (secret === null) return null
  for (const name of ["drawing", "challenge_drawing"]) {
    const ref = secret[name]
    if (ref?.sealed == null) continue
    const drawing = await openJson(st.data.drawings[ref.sealed], fromHex(ref.key))
    // A source a clear drawing holds: {same: [step, key, name]}.
    for (const [source, data] of Object.entries(drawing.sources ?? {})) {
      if (data?.same != null) drawing.sources[source] = st.of(data.same).sources[data.same[2]]
    }
    secret[name] = drawing
  }
  return secret
}

// --------------------------------------------------------------------------- answers

const DASHES = /[\u2212\u2013\u2014\ufe63\uff0d]/g
const WORDS = {true: true, yes: true, y: true, t: true, false: false, no: false, n: false, f: false}

function normalise(typed) {
  return String(typed ?? "").trim().slice(0, 200).replace(DASHES, "-")
}

const DIGIT = /^\p{Nd}$/u

// The value of a decimal digit of any script, as Python's int() reads it ("３" is 3):
// every script's digits run 0 to 9 in consecutive code points.
function digitValue(ch) {
  let start = ch.codePointAt(0)
  while (DIGIT.test(String.fromCodePoint(start - 1))) start -= 1
  return (ch.codePointAt(0) - start) % 10
}

// A whole number as lessons.grading._read_int reads it, in canonical text ("-7"), or null.
function readInt(token) {
  const m = /^([+-]?)\s*(\p{Nd}{1,18})$/u.exec(token.trim())
  if (m === null) return null
  const value = BigInt([...m[2]].map(digitValue).join(""))
  return (m[1] === "-" ? -value : value).toString()
}

// Python's repr of a short string, for the messages that quote what was typed.
function pyRepr(text) {
  if (text.includes("'") && !text.includes('"')) return `"${text}"`
  return `'${text.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`
}

// What was typed, read as the question's kind: {value} or {error}.
export function parseTyped(kind, typed) {
  const text = normalise(typed)
  const shown = pyRepr(String(typed ?? "").trim().slice(0, 40))
  if (kind === "bool") {
    const word = text.toLowerCase()
    if (Object.prototype.hasOwnProperty.call(WORDS, word)) return {value: WORDS[word] ? "true" : "false"}
    return {error: `Could not read ${shown} as yes or no: type True or False.`}
  }
  if (kind === "int") {
    const value = readInt(text)
    if (value === null) {
      return {error: `Could not read ${shown} as a whole number: type one, like -7 or 12.`}
    }
    return {value}
  }
  let inner = text
  if (inner.length >= 2 && ((inner[0] === "(" && inner.endsWith(")")) ||
                            (inner[0] === "[" && inner.endsWith("]")))) {
    inner = inner.slice(1, -1)
  }
  const values = inner.split(/[,\s]+/).filter((t) => t).map(readInt)
  if (!values.length || values.includes(null) || values.length > 8) {
    return {error: `Could not read ${shown} as a shape: type whole numbers, like (4, 3).`}
  }
  return {value: values}
}

// An answer as Python prints it: -7, (4, 3), (5,), True.
function formatAnswer(kind, value) {
  if (kind === "bool") return value === "true" ? "True" : "False"
  if (kind === "int") return value
  return value.length === 1 ? `(${value[0]},)` : `(${value.join(", ")})`
}


// The hint for a wrong answer: the one lessons.hint gives for that value, else the method.
// A tuple's entries are compared as salted hashes (q.parts, q.count), never in the clear.
function hintFor(st, q, given) {
  let key = null
  const i = st.i
  if (q.kind === "int" || q.kind === "bool") key = given
  else if (partHash(st, i, "n", given.length) !== q.count) key = `len:${given.length}`
  else key = "off:" + given.map((v, k) => (partHash(st, i, k, v) === q.parts[k] ? null : k)).filter((k) => k !== null).join(",")
  return Object.prototype.hasOwnProperty.call(q.hints, key) ? q.hints[key] : q.method
}

// --------------------------------------------------------------------------- drawing

function escape(text) {
  return String(text).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
}

// Hide (or show) what would answer the step's question: position labels, hover, fields.
// (While a question waits the step shows its `withheld` drawing: a walk that stops before
// the asked jump, cells lettered, the buffer one colour; see explorer.lessons.withholding.)
function conceal(args, drawing, concealed) {
  for (const fig of ["logical", "buffer"]) {
    const source = args[`labels_${fig}`]
    source.data = labelRows(drawing, fig, concealed, source.data.text?.length ?? 0)
  }
  const tips = args.tooltips[String(concealed)]
  args.hover_logical.tooltips = tips.logical
  args.hover_buffer.tooltips = tips.buffer
  const tags = args.frames_source.tags?.[0]
  if (tags && tags.concealed !== concealed) args.frames_source.tags = [{...tags, concealed}]
  args.fields.visible = !concealed
  args.fields_heading.visible = !concealed
  args.state.text = `<div class="candela-export-state">${drawing.pipeline}${concealed ? "" : drawing.layout}</div>`
}

// A figure's labels source from the drawing's blocks, as labels.label_rows builds it:
// each kind's rows one after another, the whole padded with rows that draw nothing to at
// least `atLeast` rows (a text glyph's source must never get shorter), position labels
// dropped while concealed.
const LABEL_STYLE = {size: "0px", align: "left", baseline: "middle", x_offset: 0, y_offset: 0,
  style: "normal"}

function labelRows(drawing, fig, concealed, atLeast = 0) {
  const out = {x: [], y: [], text: [], color: [], kind: []}
  for (const key of Object.keys(LABEL_STYLE)) out[key] = []
  for (let [kind, rows] of drawing.labels[fig]) {
    if (concealed && drawing.position_labels.includes(kind)) rows = null
    const count = rows === null ? 0 : rows.text.length
    for (let i = 0; i < count; i++) {
      out.x.push(rows.x[i])
      out.y.push(rows.y[i])
      out.text.push(rows.text[i])
      out.color.push(rows.color[i])
      out.kind.push(kind)
      for (const key of Object.keys(LABEL_STYLE)) out[key].push(rows[key])
    }
  }
  while (out.text.length < atLeast) {
    out.x.push(NaN)
    out.y.push(NaN)
    out.text.push("")
    out.color.push("#000000")
    out.kind.push("pad")
    for (const [key, fallback] of Object.entries(LABEL_STYLE)) out[key].push(fallback)
  }
  return out
}

// Swap a drawing's data into the page's figures.
function draw(args, drawing, concealed) {
  const names = ["logical_source", "buffer_source", "marks_logical", "marks_buffer",
    "units_source", "marks_cost"]
  const empty = (src) => Object.fromEntries(Object.keys(src.data).map((k) => [k, []]))
  args.jump_source.data = empty(args.jump_source)
  for (const name of names) {
    const data = drawing.sources[name]
    args[name].data = {...data}
  }
  // The tags (unit, frame rings, text alternative, concealment) before the new walk.
  args.frames_source.tags = [{...drawing.tags[0], concealed}]
  // Last: a new walk restarts the traversal (traverse.mjs "reset"), on the data above.
  // Emptied first, so that a step with the very same walk restarts it too.
  args.frames_source.data = Object.fromEntries(Object.keys(args.frames_source.data).map((k) => [k, []]))
  args.frames_source.data = {...drawing.sources.frames_source}
  const fit = (fig, [x0, x1, y0, y1, width, height]) => {
    fig.x_range.setv({start: x0, end: x1})
    fig.y_range.setv({start: y0, end: y1})
    fig.setv({width, height})
  }
  fit(args.logical_figure, drawing.logical_size)
  fit(args.buffer_figure, drawing.buffer_size)
  // The cost of the walk: its units (none while a question waits) and its words.
  fit(args.cost_figure, drawing.cost_size)
  args.cost_figure.visible = drawing.cost_visible
  args.cost.text = drawing.cost
  args.slider.setv({end: drawing.slider.end, disabled: drawing.slider.disabled, value: 0})
  args.odometer.text = drawing.odometer
  args.fields.text = drawing.fields
  conceal(args, drawing, concealed)
  args.logical_heading.text = drawing.logical_heading
  args.buffer_heading.text = drawing.buffer_heading
}

// This page's own traversal button, clicked as the mouse would (runs traverse.mjs).
function press(button) {
  const view = globalThis.Bokeh?.index?.find_one?.(button)
  const el = view?.button_el ?? view?.shadow_el?.querySelector?.("button")
  el?.click()
}

function show(args, st, i) {
  const steps = st.data.steps
  i = Math.max(0, Math.min(steps.length - 1, i))
  st.i = i
  st.done = false
  st.last = null
  const step = steps[i]
  const asks = step.question !== null || step.challenge !== null
  draw(args, asks ? (step.withheld ?? step.drawing) : step.drawing, asks)
  args.header.text = step.header
  args.text.text = step.text
  args.error.text = step.error ? `<div class="candela-error" role="alert">${step.error}</div>` : ""
  args.prev.disabled = i <= 0
  args.next.disabled = i >= steps.length - 1
  args.verdict.text = '<div class="candela-verdict"></div>'
  args.reveal.setv({text: "", visible: false})
  args.answer.setv({value: "", value_input: ""})
  if (step.question !== null) {
    args.question.text = `<div class="candela-question">${step.question.prompt}</div>`
    args.answer_row.visible = true
    args.show_me.visible = false
  } else if (step.challenge !== null) {
    args.question.text =
      `<div class="candela-question">${step.challenge.prompt}</div>` +
      `<div class="candela-target">target: ${step.challenge.target}</div>` +
      `<div class="candela-legend candela-offline-note">${escape(st.data.challenge_note)}</div>`
    args.answer_row.visible = false
    args.show_me.visible = true
  } else {
    args.question.text = ""
    args.answer_row.visible = false
    args.show_me.visible = false
  }
  args.question.visible = asks
}

// Plain text with its `code` spans as code, as explorer.markup.inline_html renders it.
function inline(text) {
  return escape(text).replace(/`([^`\n]+)`/g, "<code>$1</code>")
}

function verdictHtml(kind, message, worked) {
  const mark = {right: "✓ ", shown: "→ ", wrong: "✗ ", unread: ""}[kind]
  const work = worked ? `<div class="candela-worked">${inline(worked)}</div>` : ""
  return `<div class="candela-verdict candela-verdict-${kind}">${mark}${inline(message)}${work}</div>`
}

// After a right answer or "show me": the reveal, the fields, every label, and play.
function reveal(args, st, step, drawing, text) {
  st.done = true
  args.show_me.visible = false
  if (text) args.reveal.setv({text, visible: true})
  if (drawing === step.drawing && step.withheld == null) {
    conceal(args, drawing, false)
    if (String(args.play.label).includes("play")) press(args.play)
  } else {
    draw(args, drawing, false)
    // A new walk restarts on a timeout (traverse.mjs "reset"): play once it has.
    setTimeout(() => press(args.play), 20)
  }
}

function check(args, st, enter) {
  const step = st.data.steps[st.i]
  const q = step.question
  if (q === null) return
  const typed = args.answer.value_input || args.answer.value || ""
  if (enter && !typed.trim()) return // the box emptied for a new step, or left empty
  if (st.last === typed) return // Enter and a click on "check" for one answer
  st.last = typed
  const read = parseTyped(q.kind, typed)
  if (read.error !== undefined) {
    args.verdict.text = verdictHtml("unread", read.error, "")
    return
  }
  // Every answer taken (in a byte unit, a stride in bytes or in elements) opens the seal.
  const i = st.i
  unseal(st, i, read.value).then((secret) => {
    if (st.i !== i || st.last !== typed) return // moved on meanwhile
    if (secret !== null) {
      args.verdict.text = verdictHtml("right", secret.right, secret.right_worked)
      if (!st.done) reveal(args, st, step, secret.drawing, secret.reveal)
    } else {
      wrong(args, st, q, read.value)
    }
  })
}

function wrong(args, st, q, value) {
  const advice = hintFor(st, q, value)
  args.verdict.text = verdictHtml("wrong", `Not quite: you said ${formatAnswer(q.kind, value)}. ${advice}`, "")
  args.show_me.visible = !st.done
}

function showMe(args, st) {
  const step = st.data.steps[st.i]
  if (step.question === null && step.challenge === null) return
  const i = st.i
  unseal(st, i, null).then((secret) => {
    if (secret !== null && st.i === i) shown(args, st, step, secret)
  })
}

function shown(args, st, step, secret) {
  if (step.challenge !== null) {
    args.verdict.text = verdictHtml("shown", secret.challenge_shown, secret.challenge_shown_worked)
    reveal(args, st, step, secret.challenge_drawing, secret.reveal)
    return
  }
  args.verdict.text = verdictHtml("shown", secret.shown, secret.shown_worked)
  reveal(args, st, step, secret.drawing, secret.reveal)
}

// --------------------------------------------------------------------------- keys

// targetOf, isTyping and isPressable: typing_keys.mjs, put before this file.

function installKeys(args, st) {
  if (st.keys) return
  st.keys = true
  window.addEventListener("keydown", (event) => {
    if (event.defaultPrevented || event.ctrlKey || event.altKey || event.metaKey) return
    const target = targetOf(event)
    if (isTyping(target)) return
    switch (event.key) {
      case "ArrowRight":
        press(args.forward)
        break
      case "ArrowLeft":
        press(args.back)
        break
      case " ":
      case "Spacebar":
        if (isPressable(target)) return
        press(args.play)
        break
      case "n":
      case "N":
        show(args, st, st.i + 1)
        break
      case "p":
      case "P":
        show(args, st, st.i - 1)
        break
      default:
        return
    }
    event.preventDefault()
    event.stopPropagation()
  }, true)
}

// The one callback of the page: the document's "ready", or a click or Enter on a control.
export default function (args, obj) {
  const st = stateOf(args)
  obj = obj?.origin ?? obj // a click comes as the event, its origin the button
  if (obj === args.prev) show(args, st, st.i - 1)
  else if (obj === args.next) show(args, st, st.i + 1)
  else if (obj === args.check) check(args, st, false)
  else if (obj === args.answer) check(args, st, true)
  else if (obj === args.show_me) showMe(args, st)
  else {
    installKeys(args, st)
    show(args, st, 0)
  }
}
