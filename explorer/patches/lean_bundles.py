"""A served page lists only the Bokeh bundles it uses.

Patch ``lean_bundles``: Bokeh's server puts every one of its bundles in the page;
the resources of a server's Tornado application (``server._tornado.resources``,
no public handle) are wrapped so that ``bokeh-gl`` (WebGL, never used: every
figure draws on a canvas) is left out (:func:`explorer.serving.lean_resources`).
Bokeh has no setting for it.
"""

from __future__ import annotations

from typing import Any

from . import Patch, apply, left_off, register

__all__ = ["lean_bundles"]


def lean_bundles(server: Any, lean: Any) -> bool:
    """The pages of ``server`` (what :func:`panel.serve` returns) get ``lean(resources)``.

    False (pages list every bundle) when the patch is off.
    """
    if not apply("lean_bundles"):
        return False
    tornado_app = getattr(server, "_tornado", None)  # Bokeh's Tornado application
    if tornado_app is None or not callable(getattr(tornado_app, "resources", None)):
        return left_off("lean_bundles", "the server has no _tornado.resources")
    if getattr(tornado_app, "_candela_lean", False):
        return True
    full = tornado_app.resources

    def resources(absolute_url=None):
        return lean(full(absolute_url))

    tornado_app.resources = resources
    tornado_app._candela_lean = True
    return True


register(
    Patch(
        name="lean_bundles",
        changes="the resources method of a server's bokeh.server.tornado.BokehTornado "
        "(on the instance)",
        why="Bokeh's server puts every bundle in the page, bokeh-gl (WebGL) too",
        buys="one script fewer to fetch and run per first load",
        checked={"bokeh": "3.9"},
        needs=(
            "bokeh.server.tornado:BokehTornado.resources",
            "bokeh.resources:Resources.clone",
        ),
    )
)
