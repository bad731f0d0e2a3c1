// Candela Explorer, in the browser: the keyboard of the classroom.
//
// One keydown listener per explorer: ArrowLeft / ArrowRight step the traversal,
// Space plays and pauses it, n / p go to the next / previous lesson step. Keys act
// only on the explorer that holds the focus or was clicked last (or, with nothing
// focused, on a page's only explorer), and never on one that is hidden, so several explorers (a notebook's outputs, a row of them) each
// keep their own. The traversal keys click this explorer's own buttons (found by
// their CSS class inside its element, never by a page-wide model name), so they
// run exactly what a click runs in traverse.mjs; n / p go to the server as a
// message, since the lesson lives there. Nothing fires while the student types in
// a text box, picks from a list or drags a slider, or with Ctrl, Alt or Meta held.
// The server starts the reveal by raising `play_count`. Drawn, it also installs the
// figures' painting rules (patches/steady.mjs and cells.mjs) and, on a served page, the URL kept in the page (keep_href.mjs), the
// first parts of its module. A page whose server went away says so
// and offers to reconnect. typing_keys.mjs, put before this file, tells typing from keys.

// The explorer this component belongs to: its nearest `.candela-explorer` ancestor,
// across the shadow roots Panel renders into.
function explorerOf(el) {
  let node = el
  while (node) {
    if (node.classList && node.classList.contains("candela-explorer")) return node
    node = node.parentNode || (node instanceof ShadowRoot ? node.host : null)
  }
  return null
}

// querySelector that looks inside shadow roots too (Bokeh and Panel render into them).
function deepFind(root, selector) {
  const queue = root.shadowRoot ? [root.shadowRoot, root] : [root]
  while (queue.length) {
    const node = queue.shift()
    const hit = node.querySelector ? node.querySelector(selector) : null
    if (hit) return hit
    const all = node.querySelectorAll ? node.querySelectorAll("*") : []
    for (const el of all) if (el.shadowRoot) queue.push(el.shadowRoot)
  }
  return null
}

// No element has the focus (the key went to the page itself).
function nothingFocused(event) {
  const target = targetOf(event)
  return target === document.body || target === document.documentElement || target === window
}

// The only explorer of the page (a served page): it takes keys nobody else has.
function lone(explorer) {
  const all = document.querySelectorAll(".candela-explorer")
  return all.length === 1 && all[0] === explorer
}

function contains(root, path) {
  return root != null && path.includes(root)
}

function isShown(el) {
  return el != null && el.isConnected && el.getClientRects().length > 0 &&
    document.visibilityState !== "hidden"
}

// The server went away (its worker stopped, the network dropped): the page says so, on
// top of everything, and offers to open the same state again from its URL (which holds
// it) on whichever server answers now. Once per page, whatever the number of explorers.
function watchConnection(doc) {
  if (!doc || doc.__candelaWatched) return
  doc.__candelaWatched = true
  doc.on_event("connection_lost", () => {
    if (document.querySelector(".candela-lost")) return
    const box = document.createElement("div")
    box.className = "candela-lost"
    box.setAttribute("role", "alert")
    box.style.cssText =
      "position:fixed;top:0;left:0;right:0;z-index:10000;padding:10px 16px;" +
      "background:#A63C00;color:#fff;font:16px/1.4 sans-serif;text-align:center"
    box.append("The server went away: changes on this page do nothing now. ")
    const again = document.createElement("button")
    again.className = "candela-reconnect"
    again.textContent = "reconnect"
    again.style.cssText = "font:inherit;margin-left:8px;padding:2px 12px;cursor:pointer"
    again.addEventListener("click", () => window.location.reload())
    box.append(again)
    document.body.append(box)
  })
}

// The still picture a notebook output carries before the live explorer (explorer/still.py,
// put there by explorer/notebook.py) is what a page shows where no script runs, or where
// Panel's JavaScript cannot be loaded (an exported notebook opened with no network): the
// live explorer, once drawn, hides the one of its own output.
function hideStill(el, tries = 0) {
  for (let node = el; node; node = node.parentNode || (node instanceof ShadowRoot ? node.host : null)) {
    const still = node.querySelector ? node.querySelector(":scope > .candela-still-html") : null
    if (still) {
      still.hidden = true
      return
    }
  }
  if (!el.isConnected && tries < 50) setTimeout(() => hideStill(el, tries + 1), 100)
}

export function render({model, view}) {
  // From steady.mjs, cells.mjs, notebook_comm.mjs, keep_href.mjs and
  // release_listeners.mjs (explorer/patches/), which come first in this module; a patch
  // that is off is an empty function there (keepHref then returns nothing: Panel's
  // Location is left alone).
  steady(globalThis.Bokeh)
  cells(globalThis.Bokeh)
  notebookComm(globalThis.Bokeh)
  releaseListeners(globalThis.Bokeh)
  const keepHrefInPage = keepHref(globalThis.Bokeh) ?? (() => {})
  // Drawn: said in a task of its own, once the page has built the whole output around
  // this component (in a notebook the kernel holds an output's changes until then:
  // Panel's page side drops the messages that come before; explorer/notebook.py). A
  // served page (no notebook comms) does not say it: its server holds nothing.
  if (globalThis.PyViz?.comm_manager != null) setTimeout(() => model.send_msg({shown: true}), 0)
  setTimeout(() => hideStill(view.el), 0)
  let root = null
  let active = false // this explorer was the last one clicked, or holds the focus
  const rootOf = () => (root && root.isConnected ? root : (root = explorerOf(view.el)))

  // This explorer's own traversal button (by its class), clicked as the mouse would.
  const buttonOf = (action) => {
    const host = rootOf() ? deepFind(rootOf(), `.candela-${action}`) : null
    return host ? (host.shadowRoot || host).querySelector("button") || host : null
  }
  const press = (action) => buttonOf(action)?.click()

  const onPointer = (event) => {
    active = contains(rootOf(), event.composedPath ? event.composedPath() : [])
  }
  const onFocus = (event) => {
    const path = event.composedPath ? event.composedPath() : []
    if (path.length && path[0] !== window && path[0] !== document.body) {
      active = contains(rootOf(), path)
    }
  }

  const onKey = (event) => {
    if (event.defaultPrevented || event.ctrlKey || event.altKey || event.metaKey) return
    const explorer = rootOf()
    if (!isShown(explorer)) return
    const path = event.composedPath ? event.composedPath() : []
    // Keys belong to the explorer that has the focus or was last clicked; a key typed
    // anywhere else on the page (a notebook cell, another explorer) is not ours.
    if (!contains(explorer, path) && !active && !(nothingFocused(event) && lone(explorer))) return
    const target = targetOf(event)
    if (isTyping(target)) return
    switch (event.key) {
      case "ArrowRight":
        press("forward")
        break
      case "ArrowLeft":
        press("back")
        break
      case " ":
      case "Spacebar":
        if (isPressable(target)) return
        press("toggle")
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
    event.stopPropagation()
  }

  watchConnection(view.model.document)
  if (model.follow_history) keepHrefInPage(view.model.document)
  model.on("follow_history", () => model.follow_history && keepHrefInPage(view.model.document))

  // Back and forward change the URL: tell the server, which follows it without a reload.
  const onPop = () => {
    if (model.follow_history) model.send_msg({search: window.location.search})
  }

  // Capture, so a notebook's own shortcuts do not see the keys an explorer takes.
  window.addEventListener("keydown", onKey, true)
  window.addEventListener("pointerdown", onPointer, true)
  window.addEventListener("focusin", onFocus, true)
  window.addEventListener("popstate", onPop)
  model.on("remove", () => {
    window.removeEventListener("keydown", onKey, true)
    window.removeEventListener("pointerdown", onPointer, true)
    window.removeEventListener("focusin", onFocus, true)
    window.removeEventListener("popstate", onPop)
  })
  // The room the figures have: the width of this explorer's figures column, the
  // window's height and how much of it the two figures have (the window less what the
  // column holds besides them, and less the title above it when it starts on the first
  // screen), sent when it changes (a phone, a resized window, a notebook's output,
  // presenter mode), so the server sizes the cells to fit (figures.Figures.set_room).
  let observer = null, sent = "", timer = null
  // The cost panel (under the traversal, explorer.cost_view) is left out: the grid and the
  // buffer keep their room, and the panel is scrolled to under them.
  const costPanel = (el) => el.classList.contains("candela-cost")
  const figuresIn = (node, figures = []) => {
    for (const el of node.children) {
      if (costPanel(el)) continue
      if (el.classList.contains("bk-Figure")) figures.push(el)
      else figuresIn(el, figures)
      if (el.shadowRoot) figuresIn(el.shadowRoot, figures)
    }
    return figures
  }
  const figuresHeight = (views) => {
    const shown = figuresIn(views.shadowRoot || views).filter((el) => el.getClientRects().length > 0)
    if (shown.length < 2) return null
    // The grid (first) and the buffer (last); a second view's beside the grid.
    let own = shown[0].getBoundingClientRect().height +
      shown[shown.length - 1].getBoundingClientRect().height
    const box = views.getBoundingClientRect()
    let bottom = box.top
    for (const el of (views.shadowRoot || views).children) {
      // (Panel's column ends with a scroll button of no height, placed after the cost
      // panel: it holds no room either)
      if (!el.getClientRects().length || costPanel(el) || !el.getBoundingClientRect().height) continue
      bottom = Math.max(bottom, el.getBoundingClientRect().bottom)
      // The row that holds the grid and a second view beside it is as tall as the
      // taller of the two: the grid may have that height, it costs the page nothing.
      const inside = el.classList.contains("bk-Figure") ? [el] : figuresIn(el)
      if (el.shadowRoot) figuresIn(el.shadowRoot, inside)
      const grid = shown[0].getBoundingClientRect().height
      if (inside.length > 1 && inside.includes(shown[0]) && !inside.includes(shown.at(-1))) {
        own += Math.max(0, el.getBoundingClientRect().height - grid)
      }
    }
    const besides = bottom - box.top - own
    // Under the controls (a phone, a narrow output): it fits a screen once scrolled to ...
    let above = box.top - rootOf().getBoundingClientRect().top
    const under = above > window.innerHeight / 3
    if (under) above = 0
    const both = Math.max(160, Math.round((window.innerHeight - above - besides - 16) / 8) * 8)
    // ... and on a page that is the explorer (served, not a notebook's output, whose
    // first screen is wherever it is scrolled to), where the grid begins on the first
    // screen (a lesson's question above it), it ends on it too.
    const page = rootOf().getBoundingClientRect().top + window.scrollY < 200
    const top = shown[0].getBoundingClientRect().top + window.scrollY
    const first = Math.round((window.innerHeight - top - 8) / 8) * 8
    return under && page && first >= 160 && first < both ? [both, first] : [both]
  }
  const sendRoom = () => {
    const views = rootOf() ? deepFind(rootOf(), ".candela-views") : null
    if (views == null || !views.isConnected) return false
    const room = [Math.round(views.clientWidth / 8) * 8, Math.round(window.innerHeight / 8) * 8]
    const height = figuresHeight(views)
    if (height != null) room.push(...height)
    const text = room.join(",")
    if (room[0] > 0 && text !== sent) {
      sent = text
      model.send_msg({room})
    }
    return true
  }
  const later = () => {
    clearTimeout(timer)
    timer = setTimeout(sendRoom, 150)
  }
  let tries = 0
  const watch = () => {
    const views = rootOf() ? deepFind(rootOf(), ".candela-views") : null
    if (views == null) {
      if (tries++ < 120) requestAnimationFrame(watch)
      return
    }
    sendRoom()
    observer = new ResizeObserver(later)
    observer.observe(views)
  }
  requestAnimationFrame(watch)
  window.addEventListener("resize", later)
  model.on("remove", () => {
    observer?.disconnect()
    window.removeEventListener("resize", later)
    clearTimeout(timer)
  })

  model.on("play_count", () => {
    const button = buttonOf("toggle")
    if (button && button.textContent.includes("play")) button.click() // not already playing
  })

  const help = document.createElement("div")
  help.className = "candela-keys"
  help.innerHTML =
    "keys (click the explorer first): <kbd>←</kbd> <kbd>→</kbd> step the walk · " +
    "<kbd>space</kbd> play / pause · <kbd>n</kbd> <kbd>p</kbd> next / previous lesson step"
  return help
}
