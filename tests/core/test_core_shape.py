"""The core's shape as issue 10 sets it: a small tool module, and a2a-sdk read by `core/client.py` alone."""

from __future__ import annotations

import ast
from pathlib import Path

import a2aconsole.core

CORE = Path(a2aconsole.core.__file__).parent
PACKAGE = CORE.parent
# The one module that reads a2a-sdk's types: the rest of the core, the web layer and the API see the small
# frozen values of core/snapshots.py, with the states' names as strings.
SDK_READERS = {"client"}


def _imports(tree: ast.Module) -> set[str]:
    """Top modules imported anywhere in a module, `if TYPE_CHECKING:` blocks and function bodies included."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module.split(".")[0])
    return found


def _importing_a2a(folder: Path) -> set[str]:
    return {
        path.relative_to(PACKAGE).as_posix()
        for path in folder.rglob("*.py")
        if "a2a" in _imports(ast.parse(path.read_text(), str(path)))
    }


def test_only_client_imports_a2a_sdk() -> None:
    importing = {Path(p).stem for p in _importing_a2a(CORE)}
    assert "client" in importing
    assert importing <= SDK_READERS, f"a2a-sdk spread to {sorted(importing - SDK_READERS)}"


def test_the_type_checking_imports_count_too() -> None:
    tree = ast.parse("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from a2a.types import Task\n")
    assert "a2a" in _imports(tree)
    assert "a2a" not in _imports(ast.parse("import a2aconsole.core\nfrom . import client\n"))


def test_web_and_api_do_not_import_a2a_sdk() -> None:
    for app in ("web", "api"):
        assert not _importing_a2a(PACKAGE / app), f"a2aconsole/{app} imports a2a-sdk"
