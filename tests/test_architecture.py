"""The shape of the code that import-linter's contracts (pyproject.toml, run by `make lint`) do not say: each wing
of the core has one door, and an import of one of our modules inside a function hides a dependency, so each
says why."""

from __future__ import annotations

import ast
from pathlib import Path

import a2aconsole

ROOT = Path(a2aconsole.__file__).parent
WINGS = ("files", "remote", "pending", "tool", "watches")


def wing_internals_imported(source: str, wing: str | None) -> list[str]:
    """The modules inside a core wing that `source` (a module of `wing`, or of none) imports past the wing's door
    (its package)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        names = []
        if isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        for name in names:
            parts = name.split(".")
            if parts[:2] == ["a2aconsole", "core"] and len(parts) > 3 and parts[2] in WINGS and parts[2] != wing:
                found.append(name)
    return found


def test_each_wing_is_entered_by_its_door() -> None:
    """`from a2aconsole.core.watches import WatchRegistry`, never `...watches.registry`, outside the wing."""
    bad = {}
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT).parts
        wing = rel[1] if rel[0] == "core" and len(rel) > 2 and rel[1] in WINGS else None
        found = wing_internals_imported(path.read_text(encoding="utf-8"), wing)
        if found:
            bad["/".join(rel)] = found
    assert bad == {}
    assert wing_internals_imported("from a2aconsole.core.pending.store import STORE\n", None) == [
        "a2aconsole.core.pending.store"
    ]
    assert wing_internals_imported("from a2aconsole.core.pending.store import STORE\n", "pending") == []


def _ours(node: ast.stmt) -> bool:
    if isinstance(node, ast.ImportFrom):
        return bool(node.level) or (node.module or "").startswith("a2aconsole")
    return isinstance(node, ast.Import) and any(a.name.startswith("a2aconsole") for a in node.names)


def unexplained_imports(source: str) -> list[int]:
    """Lines of imports of our modules inside functions with no comment saying why: on the import itself, or
    above the run of imports it belongs to."""
    lines = source.splitlines()
    found: list[int] = []
    for fn in ast.walk(ast.parse(source)):
        if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        run: list[ast.stmt] = []
        for stmt in [*fn.body, None]:
            if isinstance(stmt, ast.Import | ast.ImportFrom):
                run.append(stmt)
                continue
            if run:
                above = next((ln for ln in reversed(lines[: run[0].lineno - 1]) if ln.strip()), "")
                said = above.strip().startswith("#") or any(
                    "#" in ln for s in run for ln in lines[s.lineno - 1 : s.end_lineno]
                )
                if not said:
                    found += [s.lineno for s in run if _ours(s)]
            run = []
    return found


def test_every_import_inside_a_function_says_why() -> None:
    bad = {}
    for path in sorted(ROOT.rglob("*.py")):
        if "migrations" in path.parts:
            continue
        lines = unexplained_imports(path.read_text(encoding="utf-8"))
        if lines:
            bad[str(path.relative_to(ROOT))] = lines
    assert bad == {}, f"imports inside functions without a comment saying why: {bad}"


def test_the_scan_finds_such_imports() -> None:
    """Not vacuous: an unexplained one is found at any depth; a comment above the run, or on it, explains it."""
    src = (
        "def f():\n"
        "    import json\n"
        "    from a2aconsole.core import pending\n"
        "    class C:\n"
        "        async def g(self):\n"
        "            from .x import y\n"
        "def h():\n"
        "    # the app registry is not ready at import\n"
        "    import os\n"
        "\n"
        "    from a2aconsole.web.models import TaskEvent\n"
        "def i():\n"
        "    from a2aconsole.web import scope  # a cycle otherwise\n"
        "def j():\n"
        "    import json\n"
    )
    assert unexplained_imports(src) == [3, 6]
