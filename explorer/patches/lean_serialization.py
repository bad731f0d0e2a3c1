"""Models serialized without working out the values that are then dropped.

Patch ``lean_serialization``: Bokeh's ``HasProps.query_properties_with_values``
asks every property of a model for its value and only then drops those left at
their default (``include_defaults=False``, as serializing a model does). Working
out a default is most of the cost of sending a page (about 60% of a session
whose page was built ahead). The replacement skips a property before asking for
its value when the answer would be dropped anyway.

Reproduction (for upstream): ``m = bokeh.models.Plot()``; time
``m.query_properties_with_values(lambda p: p.serialized, include_defaults=False)``:
each of the ~100 properties' defaults is computed (lists and dicts built, themes
read) to find all but a few equal to the default and dropped.
"""

from __future__ import annotations

from typing import Any

from . import Patch, apply, register

__all__ = ["lean_serialization"]


def _query_properties_with_values(
    self, query, *, include_defaults: bool = True, include_undefined: bool = False
) -> dict[str, Any]:
    """Bokeh 3.9's ``HasProps.query_properties_with_values``, without working out skipped values.

    Bokeh's own asks every property for its value and only then drops those
    left at their default (when ``include_defaults`` is false, as serializing
    a model does); working out a default is most of the cost of sending a page
    (about 60% of a session whose page was built ahead). This skips a property
    before asking for its value when the answer would be dropped anyway: the
    same result for every model whose required properties are set (which
    Bokeh's validation demands); ``tests/explorer/test_serving.py`` holds it to
    Bokeh's own on every model of a page.
    """
    from bokeh.core.property.descriptors import UnsetValueError
    from bokeh.core.property.wrappers import PropertyValueContainer

    if include_defaults:
        return _BOKEH_QUERY(
            self, query, include_defaults=include_defaults, include_undefined=include_undefined
        )
    themed_keys: set[str] = set()
    result: dict[str, Any] = {}
    keys = self.properties(_with_props=True)
    selected = set(self._property_values) | set(self._unstable_default_values)
    themed_values = self.themed_values()
    if themed_values is not None:
        themed_keys = set(themed_values)
        selected |= themed_keys
    for key in keys:
        if key not in selected:
            continue
        descriptor = self.lookup(key)
        if not query(descriptor):
            continue
        try:
            value = descriptor.get_value(self)
        except UnsetValueError:
            if include_undefined:
                from bokeh.core.property.singletons import Undefined

                value = Undefined
            else:
                raise
        else:
            if key not in themed_keys:
                if (
                    isinstance(value, PropertyValueContainer)
                    and key in self._unstable_default_values
                ):
                    continue
        result[key] = value
    return result


_BOKEH_QUERY = None


def set_lean(on: bool = True) -> None:
    """Serialize models without working out defaults (``on``), or as Bokeh does.

    In this process, for every document: see :func:`_query_properties_with_values`.
    """
    global _BOKEH_QUERY
    from bokeh.core.has_props import HasProps

    if _BOKEH_QUERY is None:
        _BOKEH_QUERY = HasProps.query_properties_with_values
    HasProps.query_properties_with_values = _query_properties_with_values if on else _BOKEH_QUERY


def lean_serialization() -> bool:
    """Serialize models (a page's document, an edit's new models) without working out defaults,
    if the patch is on (see the module)."""
    return apply("lean_serialization")


register(
    Patch(
        name="lean_serialization",
        changes="bokeh.core.has_props.HasProps.query_properties_with_values (replaced; "
        "Bokeh's own runs when include_defaults is true)",
        why="Bokeh works out every default value before dropping it when serializing",
        buys="about 60% of the server's CPU for a session whose page was built ahead",
        checked={"bokeh": "3.9"},
        needs=(
            "bokeh.core.has_props:HasProps.query_properties_with_values",
            "bokeh.core.property.descriptors:UnsetValueError",
            "bokeh.core.property.wrappers:PropertyValueContainer",
        ),
        install=set_lean,
    )
)
