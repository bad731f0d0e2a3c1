"""The explorer's layers: no module of the package imports itself back, however indirectly.

Every import is counted, those inside functions too (they run all the same, only
later): an import graph with a cycle is a tangle a reader cannot start from either end.
What serves (``explorer.serving``, ``explorer.pool``) does not import the page; the
command (``explorer.cli``) and ``explorer.testing`` compose them.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "explorer"


def _module_name(path: Path, package: Path) -> str:
    parts = path.relative_to(package.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    """Module -> the modules of the package it imports (anywhere in its code)."""
    modules = {_module_name(p, package): p for p in package.rglob("*.py")}
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = name.split(".")
                    base = base[: len(base) - node.level + (1 if is_package else 0)]
                    stem = ".".join(base + ([node.module] if node.module else []))
                else:
                    stem = node.module or ""
                # ``from . import lessons`` imports the module, not the package's own code.
                targets = [
                    f"{stem}.{alias.name}" if f"{stem}.{alias.name}" in modules else stem
                    for alias in node.names
                ]
            for target in targets:
                # The deepest module of the package the import names.
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    graph[name].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle through each strongly connected group of modules (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return groups


def test_the_cycle_finder_finds_a_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_graph_sees_imports_inside_functions(tmp_path):
    pkg = tmp_path / "explorer"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f():\n    from .b import g\n")
    (pkg / "b.py").write_text("import explorer.a\n")
    graph = import_graph(pkg)
    assert graph["explorer.a"] == {"explorer.b"}
    assert cycles(graph) == [["explorer.a", "explorer.b"]]


def test_the_explorer_package_has_no_import_cycle():
    found = cycles(import_graph())
    assert found == [], f"modules that import one another: {found}"


def test_what_serves_does_not_import_the_page():
    graph = import_graph()
    page = {"explorer.app", "explorer.classroom", "explorer.editor", "explorer.figures"}
    for server_side in ("explorer.serving", "explorer.pool"):
        reach, todo = set(), [server_side]
        while todo:
            for w in graph[todo.pop()] - reach:
                reach.add(w)
                todo.append(w)
        assert not reach & page, f"{server_side} imports {sorted(reach & page)}"


#: The frameworks whose code only ``explorer/patches/`` may change.
FRAMEWORKS = ("panel", "bokeh", "tornado", "pyviz_comms", "ipykernel", "param")
#: Public settings, not patches.
SETTINGS = ("config", "settings")


def framework_assignments(path: Path) -> list[str]:
    """Each assignment in ``path`` onto a name imported from a framework (``pn.x.y = ...``,
    ``Class.attr = ...``, ``setattr(Class, ...)``), other than its public settings."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    imported: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {
                (a.asname or a.name).split(".")[0]
                for a in node.names
                if a.name.split(".")[0] in FRAMEWORKS
            }
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in FRAMEWORKS:
            imported |= {a.asname or a.name for a in node.names}

    def root(target: ast.expr) -> list[str]:
        chain = []
        while isinstance(target, ast.Attribute):
            chain.append(target.attr)
            target = target.value
        return [target.id, *reversed(chain)] if isinstance(target, ast.Name) else []

    found = []
    for node in ast.walk(tree):
        targets: list[ast.expr] = []
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "setattr"
            and node.args
        ):
            targets = [ast.Attribute(value=node.args[0], attr="?")]
        for target in targets:
            chain = root(target)
            if len(chain) >= 2 and chain[0] in imported and not set(chain) & set(SETTINGS):
                found.append(f"{path.name}:{node.lineno}: {'.'.join(chain)}")
    return found


def test_the_rule_sees_an_assignment_onto_a_framework(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text(
        "import panel as pn\nfrom bokeh.models import Plot\n"
        "pn.widgets.TextInput._debounce = 0\nPlot.x = 1\nsetattr(Plot, 'y', 2)\n"
        "pn.config.inline = True\n"
    )
    assert [f.split(": ")[1] for f in framework_assignments(bad)] == [
        "pn.widgets.TextInput._debounce",
        "Plot.x",
        "Plot.?",
    ]


def test_only_the_patches_change_the_frameworks():
    found = [
        hit
        for path in sorted(PACKAGE.rglob("*.py"))
        if "patches" not in path.relative_to(PACKAGE).parts
        for hit in framework_assignments(path)
    ]
    assert found == []
    # ... and in the browser: only the patches' scripts assign onto a prototype or
    # redefine a property of a framework's object (Panel's Location's href, say).
    for path in sorted(PACKAGE.rglob("*.mjs")):
        if "patches" in path.relative_to(PACKAGE).parts:
            continue
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"\.prototype(\.\w+|\[[^\]]+\])\s*=[^=]", text), path.name
        assert not re.search(r"Object\.(defineProperty|defineProperties|setPrototypeOf)\(", text), (
            path.name
        )


def test_no_class_of_the_explorer_inherits_a_patch_and_no_patch_imports_the_explorer():
    # A patch changes one of the explorer's own classes only through what that class's
    # module declares (explorer.patches.give); the class is Panel's otherwise.
    import importlib
    import inspect

    graph = import_graph()
    for name in graph:
        if name.startswith("explorer.patches"):
            outside = {m for m in graph[name] if not m.startswith("explorer.patches")}
            assert outside <= {"explorer.shipped"}, f"{name} imports {sorted(outside)}"
            continue
        module = importlib.import_module(name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ != name:
                continue
            patched = [b for b in cls.__mro__ if b.__module__.startswith("explorer.patches")]
            assert not patched, f"{name}.{cls.__name__} inherits {patched}"
