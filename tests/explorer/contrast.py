"""Contrast of text as a person sees it, for the theme tests: WCAG's ratio, and the
script that measures every visible text of a page against what is painted behind it."""

from __future__ import annotations


def luminance(rgb: tuple[float, float, float]) -> float:
    """WCAG's relative luminance of an sRGB colour of 0..255 channels."""

    def channel(c: float) -> float:
        c /= 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(c) for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: tuple[float, float, float], b: tuple[float, float, float]) -> float:
    """WCAG's contrast ratio of two colours, 1 to 21."""
    la, lb = sorted((luminance(a), luminance(b)))
    return (lb + 0.05) / (la + 0.05)


def hex_rgb(color: str) -> tuple[int, int, int]:
    return tuple(int(color[i : i + 2], 16) for i in (1, 3, 5))


#: Every visible element with text of its own (through shadow roots): its text, its colour
#: and the colour behind it, each colour composited over what is under it (rgba).
TEXT_COLOURS_JS = """() => {
  const parse = (c) => {
    const m = c.match(/rgba?\\(([^)]+)\\)/);
    if (!m) return [0, 0, 0, 0];
    const p = m[1].split(/[ ,\\/]+/).filter(Boolean).map(Number);
    return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
  };
  const parentOf = (el) => el.parentElement || (el.parentNode && el.parentNode.host) || null;
  const over = (top, under) => top.slice(0, 3).map((c, i) => c * top[3] + under[i] * (1 - top[3]));
  const behind = (el) => {
    const layers = [];
    for (let node = el; node; node = parentOf(node)) {
      const bg = parse(getComputedStyle(node).backgroundColor);
      if (bg[3] > 0) layers.push(bg);
      if (bg[3] >= 1) break;
    }
    let colour = [255, 255, 255];  // the page's canvas, where nothing is painted
    const root = parse(getComputedStyle(document.documentElement).backgroundColor);
    if (root[3] > 0) colour = over(root, colour);
    for (const layer of layers.reverse()) colour = over(layer, colour);
    return colour;
  };
  const out = [];
  const walk = (root) => {
    for (const el of root.querySelectorAll("*")) {
      if (el.shadowRoot) walk(el.shadowRoot);
      if (["SCRIPT", "STYLE", "TITLE", "OPTION"].includes(el.tagName)) continue;
      const own = Array.from(el.childNodes).some(
        (n) => n.nodeType === 3 && n.textContent.trim() !== "");
      if (!own) continue;
      const r = el.getBoundingClientRect(), cs = getComputedStyle(el);
      if (r.width === 0 || r.height === 0 || cs.visibility === "hidden" || cs.opacity === "0") continue;
      if (el.closest && el.closest("[disabled]")) continue;  // WCAG leaves disabled controls out
      const bg = behind(el), fg = parse(cs.color);
      out.push({text: el.textContent.trim().slice(0, 40), fg: over(fg, bg), bg});
    }
  };
  walk(document);
  return out;
}"""


def low_contrast(page, least: float = 4.5) -> list[dict]:
    """The visible texts of ``page`` under ``least`` to 1 against what is behind them."""
    found = []
    for t in page.evaluate(TEXT_COLOURS_JS):
        ratio = contrast(t["fg"], t["bg"])
        if ratio < least:
            found.append(
                {"text": t["text"], "ratio": round(ratio, 2), "fg": t["fg"], "bg": t["bg"]}
            )
    return found


#: Every text a figure draws on its canvas (cell labels, tile headers, the offset marker
#: and its name): its text, font size (px), colour and the colour it is painted on, its
#: cell's fill for a cell's label, else the explorer's background (computed).
FIGURE_TEXTS_JS = """() => {
  const doc = Bokeh.documents[0];
  const find = (root) => {
    for (const el of root.querySelectorAll("*")) {
      if (el.classList && el.classList.contains("candela-explorer")) return el;
      if (el.shadowRoot) { const r = find(el.shadowRoot); if (r) return r; }
    }
  };
  const m = getComputedStyle(find(document)).backgroundColor.match(/\\d+(\\.\\d+)?/g);
  const page = m.slice(0, 3).map(Number);
  const hex = (c) => [1, 3, 5].map((i) => parseInt(c.slice(i, i + 2), 16));
  const packed = (v) => [(v >>> 24) & 255, (v >>> 16) & 255, (v >>> 8) & 255];
  const out = [];
  for (const fig of ["logical", "buffer"]) {
    const labels = doc.get_model_by_name(`labels-${fig}-source`).data;
    const cells = doc.get_model_by_name(`${fig}-source`).data;
    const first = {};
    labels.kind.forEach((k, i) => { if (!(k in first)) first[k] = i; });
    for (let i = 0; i < labels.text.length; i++) {
      const size = parseFloat(labels.size[i]);
      if (!labels.text[i] || !(size > 0)) continue;
      const kind = labels.kind[i];
      const inCell = kind.endsWith("_label");
      const bg = inCell ? packed(cells.color[i - first[kind]]) : page;
      out.push({fig, kind, text: labels.text[i], px: size, fg: hex(labels.color[i]), bg});
    }
  }
  return out;
}"""


def low_contrast_figure_texts(page, least: float = 4.5) -> list[dict]:
    """The figures' canvas texts of ``page`` under ``least`` to 1 against what is behind."""
    texts = page.evaluate(FIGURE_TEXTS_JS)
    assert texts, "the figures draw no text"
    return [
        {**t, "ratio": round(contrast(t["fg"], t["bg"]), 2)}
        for t in texts
        if contrast(t["fg"], t["bg"]) < least
    ]


#: Each text box with text in it, shown: its value, text colour and background colour.
BOXES_JS = """() => {
  const out = [];
  const walk = (root) => {
    for (const el of root.querySelectorAll("*")) {
      if (el.shadowRoot) walk(el.shadowRoot);
      if (el.tagName === "INPUT" && el.type === "text" && el.value && el.getClientRects().length) {
        const cs = getComputedStyle(el);
        out.push([el.value, cs.color, cs.backgroundColor]);
      }
    }
  };
  walk(document);
  return out;
}"""


def low_contrast_boxes(page, least: float = 4.5) -> list[tuple]:
    """The text boxes whose typed text is under ``least`` to 1 against the box (an input's
    value is no text node: :func:`low_contrast` cannot see it). Fails if no box has text."""
    boxes = page.evaluate(BOXES_JS)
    assert boxes, "no text box with text in it"
    return [b for b in boxes if contrast(_rgb(b[1]), _rgb(b[2])) < least]


def _rgb(css: str) -> tuple[int, int, int]:
    r, g, b = (int(float(v)) for v in css[css.index("(") + 1 : css.index(")")].split(",")[:3])
    return r, g, b
