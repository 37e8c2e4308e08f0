"""The shape of the code that import-linter does not see (its contracts, run by `make lint`, are in
pyproject.toml): an import of one of our modules inside a function hides a dependency, so each says why."""

from __future__ import annotations

import ast
from pathlib import Path

import a2aconsole

ROOT = Path(a2aconsole.__file__).parent


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
