"""Two explorers on one page (and one explorer shown twice), in Debian's Chromium.

Each explorer's parts are found inside its own ``.candela-explorer`` element, never
by a model name the page shares: stepping, playing, hovering and keys in one never
change the other, and nothing on the page throws.
"""

from __future__ import annotations

import re

import pytest

pytest.importorskip("playwright")
from playwright.sync_api import expect

from explorer.testing import served_app, wait_connected

pytestmark = pytest.mark.browser


def two_explorers():
    import panel as pn

    from explorer.app import Explorer

    return pn.Row(Explorer(shape=(3, 4), ops=".transpose()"), Explorer(shape=(2, 3)))


class SharedExplorer:
    """One Explorer handed to every session: the same object displayed twice, as when
    two notebook cells (or two open notebooks) show one explorer."""

    def __init__(self):
        self.ex = None

    def __call__(self):
        from explorer.app import Explorer

        if self.ex is None:
            self.ex = Explorer(shape=(3, 4))
        return self.ex.__panel__()


def element(odometer: str) -> int:
    return int(re.search(r"element (\d+) of", odometer).group(1))


def open_page(page, url):
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: m.type == "error" and errors.append(m.text))
    page.goto(url)
    explorers = page.locator(".candela-explorer")
    expect(explorers).to_have_count(2, timeout=30000)
    for i in range(2):
        expect(explorers.nth(i).locator(".candela-odometer")).to_contain_text("element 1 of")
    # Each page says how much room its figures have and they are sized to it: a click
    # made before then can land while the figures are laid out again.
    wait_connected(page, explorers=2)
    return explorers, errors


def odometers(explorers) -> list[int]:
    return [element(explorers.nth(i).locator(".candela-odometer").inner_text()) for i in range(2)]


def test_two_explorers_on_one_page_keep_their_own_traversal_and_keys(page):
    with served_app(two_explorers) as url:
        explorers, errors = open_page(page, url)
        one, two = explorers.nth(0), explorers.nth(1)
        expect(one.locator(".candela-odometer")).to_contain_text("of 12")
        expect(two.locator(".candela-odometer")).to_contain_text("of 6")

        one.locator(".candela-forward .bk-btn").click()
        one.locator(".candela-forward .bk-btn").click()
        expect(one.locator(".candela-odometer")).to_contain_text("element 3 of 12")
        assert odometers(explorers) == [3, 1]

        # Keys go to the explorer last clicked: a click on the second's grid, then arrows.
        two.locator(".candela-views .bk-events").first.click()
        page.keyboard.press("ArrowRight")
        expect(two.locator(".candela-odometer")).to_contain_text("element 2 of 6")
        assert odometers(explorers) == [3, 2]
        one.locator(".candela-views .bk-events").first.click()
        page.keyboard.press("ArrowLeft")
        expect(one.locator(".candela-odometer")).to_contain_text("element 2 of 12")
        assert odometers(explorers) == [2, 2]

        # Playing the second to its end leaves the first where it was.
        two.locator(".candela-toggle .bk-btn").click()
        expect(two.locator(".candela-odometer")).to_contain_text("element 6 of 6", timeout=15000)
        assert odometers(explorers) == [2, 6]

        # Hovering a cell of the first lights hover frames in the first only.
        box = one.locator(".candela-views .bk-events").first.bounding_box()
        page.mouse.move(box["x"] + 25, box["y"] + 25)
        page.wait_for_function(
            """() => Bokeh.documents[0].all_models && [...Bokeh.documents[0].all_models]
                .filter(m => m.name === 'marks-logical-source')
                .some(m => m.data.mark.includes('hover'))"""
        )
        lit = page.evaluate(
            """() => [...Bokeh.documents[0].all_models]
                .filter(m => m.name === 'marks-logical-source')
                .map(m => m.data.mark.filter((k, i) => k === 'hover' && m.data.ring[i] === 0).length)"""
        )
        assert sorted(lit) == [0, 1]
        assert errors == []


def test_one_explorer_shown_twice_stays_consistent(page, context):
    with served_app(SharedExplorer()) as url:
        errors = []
        pages = [page, context.new_page()]
        for p in pages:
            p.on("pageerror", lambda e: errors.append(str(e)))
            p.on("console", lambda m: m.type == "error" and errors.append(m.text))
            p.goto(url)
            expect(p.locator(".candela-odometer")).to_contain_text("element 1 of 12")
        ops = pages[0].locator(".candela-ops-input input")
        ops.fill(".transpose()")
        ops.press("Enter")
        for p in pages:  # both displays draw the new state
            expect(p.locator(".candela-shape")).to_have_text("(4, 3)")
            expect(p.locator(".candela-ops-input input")).to_have_value(".transpose()")
            p.wait_for_function(
                "() => Array.from(Bokeh.documents[0].get_model_by_name('frames-source')"
                ".data.pos).slice(0, 4).join() === '0,4,8,1'"
            )
        # Each display walks on its own.
        pages[1].locator(".candela-forward .bk-btn").click()
        expect(pages[1].locator(".candela-odometer")).to_contain_text("element 2 of 12")
        expect(pages[0].locator(".candela-odometer")).to_contain_text("element 1 of 12")
        assert errors == []
