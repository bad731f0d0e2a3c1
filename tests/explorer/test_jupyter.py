"""``explorer.show`` and the Jupyter glue, without a kernel.

What ``show`` is given (a Layout, a Tensor, a NumPy view, a torch-like tensor)
must become the explorer's starting tensor with its real strides and offset;
importing ``explorer`` must not touch Panel. The real kernel is in
``test_notebook.py``.
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import explorer
from candela import Layout, OpError, Tensor, s
from explorer.jupyter import as_tensor, show


class FakeTorch:
    """Just enough of a torch.Tensor: strides and storage offset in elements."""

    def __init__(self, shape, stride, offset, dtype="torch.float16", size=2):
        self.shape, self._stride, self._offset = shape, stride, offset
        self.dtype, self._size = dtype, size

    def stride(self):
        return self._stride

    def storage_offset(self):
        return self._offset

    def element_size(self):
        return self._size


def field(ex, name: str) -> str:
    (text,) = re.findall(rf'class="candela-{name}">([^<]*)<', ex.fields_pane.object)
    return text


def test_show_numpy_view_uses_its_buffer_strides_and_offset():
    base = np.arange(24, dtype=np.int32).reshape(4, 6)
    v = base.T[1::2, ::-1]  # offset inside the base, a negative stride
    ex = show(v)
    assert ex.error is None
    t = ex.tensor
    assert t.stride == tuple(st // v.itemsize for st in v.strides)
    assert (
        t.offset
        == (v.__array_interface__["data"][0] - base.__array_interface__["data"][0]) // v.itemsize
    )
    assert t.offset > 0 and np.shares_memory(t.buffer, base)
    assert t.tolist() == v.tolist()
    # The fields read in bytes of the array's dtype: NumPy's own strides.
    assert ex.unit == "int32"
    assert field(ex, "stride") == str(v.strides)
    assert field(ex, "offset") == str(t.offset * v.itemsize)
    ex.unit = "elements"
    assert field(ex, "stride") == str(t.stride)


def test_show_applies_the_pipeline_on_top_of_the_start():
    a = np.arange(12.0).reshape(3, 4)[:, 1:]
    ex = show(a, ops=".transpose().slice(s[::2])")
    expected = Tensor.from_numpy(a).transpose().slice(s[::2])
    assert ex.layout == expected.layout
    assert ex.tensor.tolist() == a.T[::2].tolist()
    ex.ops = ".narrow(1, 1, 2)"
    assert ex.layout == Tensor.from_numpy(a).narrow(1, 1, 2).layout
    with pytest.raises(ValueError, match="view"):
        ex.ops = ".view((9,))"  # not contiguous: raised, the last good state stays
    assert ex.ops == ".narrow(1, 1, 2)" and ex.layout == Tensor.from_numpy(a).narrow(1, 1, 2).layout


def test_show_layout_and_tensor():
    lay = Layout((3, 4)).transpose().slice(s[1:, ::-1])
    ex = show(lay)
    assert ex.layout == lay
    assert ex.tensor.buffer.tolist() == list(range(max(lay.positions()) + 1))
    t = Tensor.from_slice(np.arange(6) * 10, (2, 3)).transpose()
    assert show(t).tensor.tolist() == [[0, 30], [10, 40], [20, 50]]
    assert explorer.show is show


def test_show_torch_like_strides_in_elements():
    fake = FakeTorch(shape=(3, 2), stride=(1, 4), offset=5)
    ex = show(fake)
    assert ex.layout == Layout.from_strided((3, 2), (1, 4), 5)
    assert ex.unit == "elements"  # PyTorch counts elements
    assert field(ex, "stride") == "(1, 4)" and field(ex, "offset") == "5"
    ex.unit = "float16"
    assert field(ex, "stride") == "(2, 8)"


def test_show_refuses_what_it_cannot_read():
    with pytest.raises(TypeError, match="storage_offset"):
        show([1, 2, 3])  # a list has no strides to show
    with pytest.raises(OpError, match="before the buffer"):
        as_tensor(Layout.from_raw_parts((3,), (-1,), (-1,), 0, 3))  # unchecked


def test_explorer_displays_as_text_outside_a_kernel():
    ex = explorer.Explorer(shape=(3, 4), ops=".transpose()")
    bundle, _ = ex._repr_mimebundle_()
    assert bundle == {"text/plain": "Explorer(shape=(3, 4), ops='.transpose()')"}


def run_python(code: str) -> str:
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_importing_explorer_imports_no_panel():
    assert (
        run_python("""
        import sys
        import explorer, explorer.notebook, explorer.export, explorer.pipeline, explorer.state
        print(sorted(m for m in ("panel",) if m in sys.modules))  # (bokeh.palettes is fine)
    """).strip()
        == "[]"
    )


def test_show_outside_a_notebook_leaves_panel_config_alone():
    assert (
        run_python("""
        import numpy as np
        import panel as pn
        from panel.config import panel_extension
        before = {k: repr(v) for k, v in pn.config.param.values().items()}
        import explorer
        ex = explorer.show(np.arange(12).reshape(3, 4).T)
        ex._repr_mimebundle_()
        after = {k: repr(v) for k, v in pn.config.param.values().items()}
        print(ex.layout.stride, panel_extension._loaded, before == after)
    """).strip()
        == "(1, 4) False True"
    )


def panels_notebook_load_script(inline: bool = True) -> str:
    """The script Panel's notebook load publishes, taken at its publication."""
    from unittest import mock

    from panel.io import notebook as panel_notebook

    published = []
    with mock.patch(
        "IPython.display.publish_display_data", lambda data, *a, **k: published.append(data)
    ):
        panel_notebook.load_notebook(inline=inline)
    scripts = [d["application/javascript"] for d in published if "application/javascript" in d]
    return max(scripts, key=len)


def test_the_notebooks_load_script_leaves_out_exactly_the_bundles_it_is_told():
    from bokeh.resources import INLINE

    from explorer.notebook import without_bundles

    js = panels_notebook_load_script()
    names = [n for n in INLINE.components_for("js") if f"/* BEGIN {n}.min.js */" in js]
    assert {"bokeh", "bokeh-gl", "bokeh-widgets"} <= set(names), names
    for name in names:
        cut = without_bundles(js, [name])
        # the bundle's whole source is gone and nothing else: every other bundle whole
        source = " ".join(INLINE.clone(components=[name]).js_raw[0].split())
        assert source[:2000] in " ".join(js.split()) and source[:2000] not in " ".join(cut.split())
        assert f"BEGIN {name}.min.js" not in cut and f"END {name}.min.js" not in cut
        for other in names:
            if other != name:
                kept = " ".join(INLINE.clone(components=[other]).js_raw[0].split())
                assert kept[-2000:] in " ".join(cut.split()), (name, other)
        # it is still one list of functions: the cut is one function and its comma
        removed = len(js) - len(cut)
        within = INLINE.clone(components=[name]).js_raw[0].count("function(Bokeh")
        assert cut.count("function(Bokeh") == js.count("function(Bokeh") - 1 - within
        assert len(source) < removed < len(source) + len(source) // 20, (name, removed)
    # a script of another shape (another Panel's template) is left as it is
    other = js.replace("/* END bokeh-gl.min.js */", "/* END bokeh-gl.min.js */ }; {")
    assert without_bundles(other, ["bokeh-gl"]) == other
    assert without_bundles(js, ["no-such-bundle"]) == js


@pytest.mark.patched("notebook7_resources")
def test_in_notebook7_the_load_takes_panel_from_the_jupyter_server_as_in_jupyterlab(monkeypatch):
    # Panel 1.10 counts only a page with JupyterLab's shell (or the classic notebook) as
    # live: Notebook 7's page loads every bundle from the CDN, so offline nothing draws
    # (test_jupyterlab.py's Notebook 7 test, in a real page, shows it).
    from explorer import patches
    from explorer.patches.notebook7_resources import LIVE_TEST, live_in_notebook7

    monkeypatch.delitem(patches._STATE, "notebook7_resources", raising=False)  # restored after
    monkeypatch.setenv("PANEL_NOTEBOOK_RESOURCES", "jupyter")  # as under a Jupyter server
    js = panels_notebook_load_script(inline=False)
    assert "/panel-preview/" in js and js.count(LIVE_TEST) == 1
    live = live_in_notebook7(js)
    assert live.replace("'.jp-LabShell, #jupyter-config-data'", "'.jp-LabShell'") == js
    # a script that tells a live page otherwise, or not at all (Panel 1.9's), as it is
    other = js.replace(LIVE_TEST, "document.querySelector('.jp-Shell') != null")
    assert live_in_notebook7(other) == other and not patches.is_on("notebook7_resources")
    other = js.replace("__panel_live_notebook__", "__panel_notebook__").replace(LIVE_TEST, "1")
    assert live_in_notebook7(other) == other
