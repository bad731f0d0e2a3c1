// Candela Explorer, in the browser: a box's typing stays in the page until Enter.
//
// Bokeh's text box tells the server the text it holds after every key (its
// `value_input`): a message, and milliseconds of the server's time, for each key, so a
// student typing `.transpose()` cost the server more than the edit it then made. The
// explorer's boxes act on their `value` alone, which the box sends when Enter is
// pressed or it loses the focus (explorer/enter_box.py, `EnterBox`). For boxes whose
// model carries the CSS class below, the text typed so far is kept in the page's
// model without being sent; every other text box is Bokeh's own.
//
// No component of its own: this file is part of the module of the explorer's keyboard
// component (explorer/keys.py), whose render() calls enterBox(). Installing twice is
// a no-op.

const ENTER_BOX_CLASS = "candela-enter-box"

function enterBox(Bokeh) {
  const viewOf = (name) => {
    try {
      return Bokeh?.Models?.get?.(name)?.prototype?.default_view?.prototype
    } catch (error) {
      return undefined // not a model this page has
    }
  }
  // The prototype in a view's class chain that defines `name`.
  const ownerOf = (proto, name) => {
    while (proto != null && !Object.prototype.hasOwnProperty.call(proto, name)) {
      proto = Object.getPrototypeOf(proto)
    }
    return proto
  }
  const typing = ownerOf(viewOf("TextInput"), "change_input_value")
  const keys = ownerOf(viewOf("panel.models.widgets.TextInput"), "_keyup")
  if (typing == null || keys == null) {
    if (viewOf("TextInput") != null && !enterBox.warned) {
      enterBox.warned = true
      console.warn("candela: patch enter_box left off: Bokeh's or Panel's TextInputView " +
        "has no change_input_value or _keyup")
    }
    return
  }
  if (typing._candelaEnterBox) return
  const ours = (view) => view.model.css_classes?.includes?.(ENTER_BOX_CLASS)

  const typed = typing.change_input_value
  typing.change_input_value = function () {
    if (!ours(this)) return typed.call(this)
    this.model.setv({value_input: this.input_el.value}, {sync: false})
  }
  // Enter applies the text. A browser applies it by itself (the input's change event),
  // but a notebook (JupyterLab) takes Enter's keydown for its own, and the change came
  // only when the box lost the focus: here Enter's keyup applies it too. (Methods are
  // looked up when called: boxes drawn before this ran get it as well.)
  const keyup = keys._keyup
  keys._keyup = function (event) {
    if (ours(this) && event.key === "Enter" && this.model.value !== this.input_el.value) {
      this.model.value = this.input_el.value
    }
    return keyup.call(this, event)
  }
  typing._candelaEnterBox = true
}
