"""The package's layers are one-way stairs: no import cycle between tracker's packages or files.

Every ``tracker/**/*.py`` is parsed with :mod:`ast`; every import of a tracker module counts,
at module level and inside functions (a lazy import is still a dependency), except those under
``if TYPE_CHECKING:``. ``from tracker.x import y`` is an edge to ``tracker.x.y`` when ``y`` is a
submodule, else to ``tracker.x``; importing a package means its ``__init__``. Files stay small:
none over :data:`MAX_LINES` lines in ``tracker/`` and ``scripts/``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "tracker"
MAX_LINES = 600


def module_name(path: Path) -> str:
    """``tracker/a/b.py`` -> ``tracker.a.b``; ``tracker/a/__init__.py`` -> ``tracker.a``."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def all_modules() -> dict[str, Path]:
    """Every module of the package by dotted name."""
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement below ``node``, skipping the bodies of ``if TYPE_CHECKING:``."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and _is_type_checking(child.test):
            for other in child.orelse:
                yield from _imports_of(other)
            continue
        yield from _imports_of(child)


def _imports_of(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        yield node
    else:
        yield from _imports(node)


def imported_modules(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The tracker modules that the file ``path`` (module ``name``) imports."""
    is_package = path.name == "__init__.py"
    out: set[str] = set()
    for node in _imports(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            if node.level:  # relative: from the module's package, one level up per extra dot
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                origin = ".".join(base + ([node.module] if node.module else []))
            else:
                origin = node.module or ""
            targets = [f"{origin}.{alias.name}" if f"{origin}.{alias.name}" in modules else origin
                       for alias in node.names]
        for target in targets:
            while target and target not in modules:  # `import tracker.a.b.C`-like spellings
                target = target.rpartition(".")[0]
            if target.startswith("tracker") and target != name:
                out.add(target)
    return out


def module_graph() -> dict[str, set[str]]:
    """``{module: modules it imports}`` over the whole package."""
    modules = all_modules()
    return {name: imported_modules(name, path, modules) for name, path in modules.items()}


def layer(module: str) -> str:
    """The package (or top-level module) a module belongs to: ``tracker.a.b`` -> ``tracker.a``."""
    return ".".join(module.split(".")[:2])


def package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The module graph collapsed onto :func:`layer` (a layer's edges to itself dropped)."""
    out: dict[str, set[str]] = {}
    for src, targets in graph.items():
        out.setdefault(layer(src), set()).update(layer(t) for t in targets if layer(t) != layer(src))
    return out


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as ``[a, b, ..., a]``, or None when it is acyclic."""
    state: dict[str, int] = {}  # 1 on the current path, 2 done
    for start in sorted(graph):
        if state.get(start):
            continue
        path, stack = [start], [iter(sorted(graph.get(start, ())))]
        state[start] = 1
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                stack.pop()
            elif state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            elif not state.get(nxt):
                state[nxt] = 1
                path.append(nxt)
                stack.append(iter(sorted(graph.get(nxt, ()))))
    return None


def _chain(cycle: list[str], graph_name: str) -> str:
    return f"an import cycle between tracker's {graph_name}:\n    " + "\n -> ".join(cycle)


def test_the_packages_import_each_other_one_way_only() -> None:
    cycle = find_cycle(package_graph(module_graph()))
    assert cycle is None, _chain(cycle, "packages")


def test_the_files_import_each_other_one_way_only() -> None:
    cycle = find_cycle(module_graph())
    assert cycle is None, _chain(cycle, "files")


def test_no_file_is_over_600_lines() -> None:
    long = {str(p.relative_to(ROOT)): n for folder in ("tracker", "scripts") for p in sorted((ROOT / folder).rglob("*.py"))
            if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert not long, f"files over {MAX_LINES} lines (split them by concern): {long}"


def test_the_checker_sees_a_cycle_and_resolves_relative_and_lazy_imports(tmp_path: Path) -> None:
    """The checker itself: relative imports, imports inside functions and TYPE_CHECKING."""
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None
    modules = {"tracker.p": Path(), "tracker.p.x": Path(), "tracker.p.y": Path(), "tracker.q": Path(),
               "tracker.q.z": Path()}
    src = tmp_path / "x.py"
    src.write_text("from typing import TYPE_CHECKING\n"
                   "from . import y\n"
                   "if TYPE_CHECKING:\n    from tracker.q.z import Thing\n"
                   "def f():\n    from ..q import helper\n    return helper\n")
    assert imported_modules("tracker.p.x", src, modules) == {"tracker.p.y", "tracker.q"}
    assert layer("tracker.p.x") == "tracker.p" and layer("tracker.cli") == "tracker.cli"
