"""One led class over two servers behind nginx, its state in Redis: a server lost loses nothing.

Two ``candela-explorer`` commands share a ``redis-server`` of the test's own
(``--class-store``); nginx (the configuration of test_proxy_browser.py, the one
``docs/classroom.md`` gives) keeps each browser on one of them. The teacher's
page and a class of 30 students' Chromium pages land on both servers; the teacher
steps, every student follows; the students answer, the teacher counts them all. Then
a server with students (not the teacher's) stops: its students' pages reconnect
through the proxy to the other server, as the same students, their answers kept and
counted, and follow on.
"""

from __future__ import annotations

import re
import subprocess

import pytest

pytest.importorskip("playwright")
from playwright.sync_api import expect

from explorer.testing import free_port, start_command, stop_command, wait_for_url
from tests.explorer.class_redis import redis_process
from tests.explorer.test_proxy_browser import NGINX, NGINX_CONF, wait_for

pytestmark = [
    pytest.mark.browser,
    pytest.mark.sweep,
    pytest.mark.skipif(NGINX is None, reason="nginx is not installed (bash tests/run installs it)"),
]

WAIT = 60_000
#: A class: each student a browser of its own (its own cookie, so nginx spreads them).
STUDENTS = 30
#: What the students answer `transpose` step 2's question (-7), in turn.
ANSWERS = ["-7", "4", "-7", "5", "4", "7"]  # a third right, "4" the commonest wrong


def server(port: int, proxy: str, store: str, lead: bool = False) -> subprocess.Popen:
    args = ["--port", str(port), "--ready", "0", "--allow-origin", proxy, "--class-store", store]
    return start_command([*args, "--class"] if lead else args)


def test_one_class_over_two_servers_keeps_every_answer_when_one_stops(browser, tmp_path):
    proxy_port, one, two = free_port(), free_port(), free_port()
    proxy = f"127.0.0.1:{proxy_port}"
    with redis_process() as (store, _):
        servers = {one: server(one, proxy, store, lead=True), two: server(two, proxy, store)}
        lines = wait_for_url(servers[one], until="  teacher's link")
        code = re.search(r"Class ([A-Z0-9]{4}):", "".join(lines)).group(1)
        token = re.search(r"teach=(\S+)", "".join(lines)).group(1)
        conf = tmp_path / "nginx.conf"
        conf.write_text(NGINX_CONF.format(tmp=tmp_path, one=one, two=two, port=proxy_port))
        nginx = subprocess.Popen(
            [NGINX, "-c", str(conf), "-p", str(tmp_path)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        contexts = []
        try:
            for port in (one, two, proxy_port):
                wait_for(port)

            def open_page(query: str):
                context = browser.new_context()  # a browser of its own: its own cookie
                contexts.append(context)
                page = context.new_page()
                response = page.goto(f"http://{proxy}/{query}")
                at = int(response.headers["x-candela-server"].rsplit(":", 1)[1])
                page.wait_for_function(
                    "() => window.Bokeh && Bokeh.documents.length > 0"
                    " && Bokeh.documents[0].get_model_by_name('frames-source') !== null",
                    timeout=WAIT,
                )
                return page, at

            teacher, teacher_at = open_page(f"?class={code}&teach={token}&lesson=transpose")
            expect(teacher.locator(".candela-class-teacher")).to_have_count(1, timeout=WAIT)
            students = [open_page(f"?class={code}") for _ in range(STUDENTS)]
            on = {s: sum(at == s for _, at in students) for s in (one, two)}
            assert min(on.values()) > 0, f"nginx sent every new browser to one server: {on}"
            for page, _ in students:
                expect(page.locator(".candela-lesson-step")).to_have_text(
                    "step 1 of 5", timeout=WAIT
                )

            # The teacher steps: the students on both servers follow.
            teacher.locator(".candela-next button").click()
            for page, _ in students:
                expect(page.locator(".candela-lesson-step")).to_have_text(
                    "step 2 of 5", timeout=WAIT
                )
            teacher.locator(".candela-class-open button").click()
            expect(teacher.locator(".candela-class-status")).to_contain_text("question open")
            answers = [ANSWERS[k % len(ANSWERS)] for k in range(STUDENTS)]
            for (page, _), text in zip(students, answers):
                box = page.locator(".candela-answer input")
                box.fill(text)
                box.press("Enter")
                expect(page.locator(".candela-class-sent")).to_contain_text(text, timeout=WAIT)
            expect(teacher.locator(".candela-class-answered")).to_have_text(
                str(STUDENTS), timeout=WAIT
            )
            right = str(answers.count("-7"))
            expect(teacher.locator(".candela-class-tally")).to_have_attribute("data-right", right)
            expect(teacher.locator(".candela-class-wrong")).to_have_text("4")

            joined = teacher.locator(".candela-class-joined").get_attribute("data-joined")
            # A server with students, not the teacher's, stops.
            gone = two if teacher_at == one else one
            servers[gone].terminate()
            servers[gone].wait(timeout=60)
            moved = [(page, text) for (page, at), text in zip(students, answers) if at == gone]
            assert moved
            for page, text in moved:
                expect(page.locator(".candela-lost")).to_be_visible(timeout=WAIT)
                before = page.evaluate("location.search")
                page.locator(".candela-reconnect").click()
                expect(page.locator(".candela-lesson-step")).to_have_text(
                    "step 2 of 5", timeout=WAIT
                )
                # the same student: its id kept, its answer there
                assert re.search(r"me=[0-9a-f]{16}", before)
                page.wait_for_function(
                    "(me) => location.search.includes(me)",
                    arg=re.search(r"me=[0-9a-f]{16}", before).group(0),
                )
                expect(page.locator(".candela-class-sent")).to_contain_text(text, timeout=WAIT)
            # The teacher still counts every student (no one counted twice, no answer lost).
            expect(teacher.locator(".candela-class-answered")).to_have_text(str(STUDENTS))
            expect(teacher.locator(".candela-class-tally")).to_have_attribute("data-right", right)
            expect(teacher.locator(".candela-class-joined")).to_have_attribute(
                "data-joined", joined
            )
            # ... and they all follow on, and see the reveal.
            teacher.locator(".candela-class-reveal button").click()
            for (page, _), text in zip(students, answers):
                kind = "right" if text == "-7" else "shown"
                expect(page.locator(f".candela-verdict-{kind}")).to_have_count(1, timeout=WAIT)
            teacher.locator(".candela-next button").click()
            for page, _ in students:
                expect(page.locator(".candela-lesson-step")).to_have_text(
                    "step 3 of 5", timeout=WAIT
                )
        finally:
            for context in contexts:
                context.close()
            nginx.terminate()
            nginx.wait(timeout=30)
            outs = [stop_command(proc) for proc in servers.values()]
    assert not any("Traceback" in out for out in outs), outs
