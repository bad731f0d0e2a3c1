"""The explorer's layers: no module of the package imports itself back, however indirectly.

Every import is counted, those inside functions too (they run all the same, only
later): an import graph with a cycle is a tangle a reader cannot start from either end.
What serves (``explorer.serving``, ``explorer.pool``) does not import the page; the
command (``explorer.cli``) and ``explorer.testing`` compose them.
"""

from __future__ import annotations

import ast
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
