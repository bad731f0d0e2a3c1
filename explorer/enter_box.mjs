// Candela Explorer, in the browser: a box's typing stays in the page until Enter.
//
// Bokeh's text box tells the server the text it holds after every key (its
// `value_input`): a message, and milliseconds of the server's time, for each key, so a
// student typing `.transpose()` cost the server more than the edit it then made. The
// explorer's boxes act on their `value` alone, which the box sends when Enter is
// pressed or it loses the focus (explorer/editor.py, `EnterBox`). For boxes whose
// model carries the CSS class below, the text typed so far is kept in the page's
// model without being sent; every other text box is Bokeh's own.
//
// No component of its own: this file is part of the module of the explorer's keyboard
// component (explorer/keys.py), whose render() calls enterBox(). Installing twice is
// a no-op.

const ENTER_BOX_CLASS = "candela-enter-box"

function enterBox(Bokeh) {
  // The view class that defines what a key does to the model (Bokeh's text-like input).
  let proto = Bokeh?.Models?.get?.("TextInput")?.prototype?.default_view?.prototype
  while (proto != null && !Object.prototype.hasOwnProperty.call(proto, "change_input_value")) {
    proto = Object.getPrototypeOf(proto)
  }
  if (proto == null || proto._candelaEnterBox) return
  const typed = proto.change_input_value
  proto.change_input_value = function () {
    if (!this.model.css_classes?.includes?.(ENTER_BOX_CLASS)) return typed.call(this)
    this.model.setv({value_input: this.input_el.value}, {sync: false})
  }
  proto._candelaEnterBox = true
}
