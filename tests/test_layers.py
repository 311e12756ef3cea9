"""The layering of `bot/` (docs/architecture.md, the design's layers): imports go one way.

Every import in every module (top-level, in functions, under TYPE_CHECKING) is read with
`ast`; a module belongs to a unit: its top-level package or module (`bot.slack`,
`bot.models`) and, inside a package, its subpackage or module (`bot.slack.flows`,
`bot.slack.deps`). No two units at either level import each other, directly or round a
cycle, and the design's rules hold.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BOT = ROOT / "bot"

#: modules at bot/*.py above the core: the docs service, the feedback records and the team
#: answers (which use the store); every other bot/*.py is core
NOT_CORE = frozenset({"bot.__main__", "bot.service", "bot.feedback", "bot.team"})
#: what the core may import besides itself: observability is used by all
CORE_MAY_USE = frozenset({"bot.observability"})
#: package → the packages it never imports
FORBIDDEN = {
    "bot.render": {"bot.slack", "bot.upstream"},
    "bot.upstream": {"bot.slack", "bot.render"},
    "bot.store": {"bot.slack", "bot.upstream", "bot.render", "bot.quota"},
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path) -> set[str]:
    """The `bot…` modules (or names of them) `path` imports."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "bot")
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "bot":
            module = node.module or ""
            found.add(module)
            # `from bot.x import y`: y may be a submodule
            found.update(f"{module}.{a.name}" for a in node.names)
    return found


def _graph() -> dict[str, set[str]]:
    """Module → the existing `bot` modules it imports."""
    paths = {_module_name(p): p for p in BOT.rglob("*.py") if "__pycache__" not in p.parts}
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        targets = set()
        for imported in _imports(path):
            # the longest prefix that is a module: `bot.render.Message` is bot.render
            parts = imported.split(".")
            while parts and ".".join(parts) not in paths:
                parts.pop()
            if parts:
                targets.add(".".join(parts))
        graph[name] = targets - {name}
    return graph


GRAPH = _graph()
#: the modules at bot/*.py (not packages)
TOP_MODULES = frozenset(_module_name(p) for p in BOT.glob("*.py")) - {"bot"}


def _unit(module: str, depth: int) -> str:
    return ".".join(module.split(".")[: depth + 1])


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one unit (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in edges.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def _why(edges: dict[str, set[str]], component: list[str], depth: int) -> list[str]:
    """The module imports that make `component` a cycle, for the failure message."""
    members = set(component)
    return sorted(
        f"{module} -> {target}"
        for module, targets in GRAPH.items()
        for target in targets
        if _unit(module, depth) in members
        and _unit(target, depth) in members
        and _unit(module, depth) != _unit(target, depth)
    )


def _packages() -> list[str]:
    return sorted(_module_name(p.parent) for p in BOT.rglob("__init__.py"))


@pytest.mark.parametrize("package", _packages())
def test_no_cycle_between_the_units_of_a_package(package: str) -> None:
    depth = package.count(".") + 1
    edges: dict[str, set[str]] = defaultdict(set)
    for module, targets in GRAPH.items():
        if not module.startswith(package + ".") or module.count(".") < depth:
            continue
        for target in targets:
            if target.startswith(package + ".") and target.count(".") >= depth:
                source, into = _unit(module, depth), _unit(target, depth)
                if source != into:
                    edges[source].add(into)
    subpackages = {p for p in _packages() if p.count(".") == depth}
    # a cycle among plain modules of a flat package is that package's own business; one
    # that takes in a subpackage is a cycle between packages
    cycles = [c for c in _cycles(edges) if subpackages & set(c) or depth == 1]
    assert [] == [_why(edges, c, depth) for c in cycles], "\n".join(
        line for c in cycles for line in ["cycle:", *_why(edges, c, depth)]
    )


def test_the_design_s_rules_hold() -> None:
    broken = []
    for module, targets in GRAPH.items():
        top = _unit(module, 1)
        for target in targets:
            if _unit(target, 1) in FORBIDDEN.get(top, ()):
                broken.append(f"{module} -> {target}")
            if module in TOP_MODULES - NOT_CORE:
                core_target = target in TOP_MODULES - NOT_CORE
                if not core_target and _unit(target, 1) not in CORE_MAY_USE:
                    broken.append(f"core {module} -> {target}")
    assert [] == sorted(broken), "\n".join(sorted(broken))
