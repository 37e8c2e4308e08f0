"""The core's shape as issue 10 sets it: a small tool module, and the SDK kept to the modules that read it."""

from __future__ import annotations

import ast
from pathlib import Path

import a2aconsole.core

CORE = Path(a2aconsole.core.__file__).parent
# The modules that still read a2a-sdk's types at run time. The design's end is client.py alone (the rest of the
# core on small frozen dataclasses); until then this list may only shrink.
SDK_READERS = {"client", "results", "following"}


def _runtime_imports(tree: ast.Module) -> set[str]:
    """Top modules imported outside `if TYPE_CHECKING:` blocks."""
    found: set[str] = set()

    def visit(nodes: list[ast.stmt]) -> None:
        for node in nodes:
            if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
                continue
            if isinstance(node, ast.Import):
                found.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found.add(node.module.split(".")[0])
            for field in ("body", "orelse", "finalbody", "handlers"):
                inner = getattr(node, field, None)
                if isinstance(inner, list):
                    visit([n for n in inner if isinstance(n, ast.stmt | ast.excepthandler)])  # type: ignore[misc]

    visit(tree.body)
    return found


def test_only_the_sdk_readers_import_a2a_sdk() -> None:
    importing = {
        path.stem for path in CORE.glob("*.py") if "a2a" in _runtime_imports(ast.parse(path.read_text(), str(path)))
    }
    assert "client" in importing
    assert importing <= SDK_READERS, f"a2a-sdk spread to {sorted(importing - SDK_READERS)}"


def test_tool_module_stays_under_400_lines() -> None:
    lines = len((CORE / "tool.py").read_text().splitlines())
    assert lines < 400, f"core/tool.py has {lines} lines"
