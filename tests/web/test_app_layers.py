"""The apps depend one way: `api` (the JSON tool API) uses `web` (chat targets, their tokens and hops, the
runtime), never the reverse. Every import of every module of `web` is read, at module level and inside
functions, as are dotted-path strings (`include(...)`, `import_module(...)`)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import a2aconsole
from tests.web.test_settings import clean_env

ROOT = Path(a2aconsole.__file__).parent


def imports_in(source: str, package: str) -> set[str]:
    """Every module `source` (a module of `package`) imports, anywhere in it (relative imports made absolute),
    and every dotted-path string naming one of our modules."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("a2aconsole."):
            found.add(node.value)
    return found


def importers_of(app: str, prefix: str) -> dict[str, list[str]]:
    """The modules of `app` (a folder under a2aconsole/) that import anything under `prefix`."""
    bad: dict[str, list[str]] = {}
    for path in sorted((ROOT / app).rglob("*.py")):
        package = ".".join(path.relative_to(ROOT.parent).parts[:-1])
        found = imports_in(path.read_text(encoding="utf-8"), package)
        hits = sorted(m for m in found if m == prefix or m.startswith(prefix + "."))
        if hits:
            bad[str(path.relative_to(ROOT))] = hits
    return bad


def test_web_imports_nothing_from_api() -> None:
    assert importers_of("web", "a2aconsole.api") == {}


def test_the_scan_sees_imports_at_every_level() -> None:
    """Not vacuous: the api app's own imports of web are found, module level and function level alike."""
    found = importers_of("api", "a2aconsole.web")
    assert "a2aconsole.web.models" in found["api/models.py"]
    assert "a2aconsole.web.runtime" in found["api/views.py"]
    src = "def f():\n    from ..api import views\n    import a2aconsole.api.calls\n    include('a2aconsole.api.urls')\n"
    assert imports_in(src, "a2aconsole.web") >= {
        "a2aconsole.api",
        "a2aconsole.api.views",
        "a2aconsole.api.calls",
        "a2aconsole.api.urls",
    }


def test_live_imports_no_view() -> None:
    """`web/live/` is the machinery (registry, frames, the fragments pages share): each view module declares its
    own live page, so the views use `web.live` and never the reverse."""
    assert importers_of("web/live", "a2aconsole.web.views") == {}
    assert "a2aconsole.web.live" in importers_of("web/views", "a2aconsole.web.live")["web/views/dashboard.py"]
    # the event fan-out and the socket routes, beside web/live/ (sends, delivery, the worker and the API use them)
    for name in ("broadcast.py", "routing.py"):
        found = imports_in((ROOT / "web" / name).read_text(encoding="utf-8"), "a2aconsole.web")
        assert not [m for m in found if m.startswith("a2aconsole.web.views")], name


PAGES_AT_START = """
import django
django.setup()
from a2aconsole.web import live
print(" ".join(sorted(live.PAGES)))
"""


def test_every_live_page_is_registered_once_django_is_set_up(tmp_path: Path) -> None:
    """A fresh process (the server, the worker) has every page once the app is ready, before any view is used."""
    env = clean_env(tmp_path / "data", tmp_path / "ws", DJANGO_SETTINGS_MODULE="a2aconsole.settings")
    run = subprocess.run(
        [sys.executable, "-c", PAGES_AT_START], cwd=ROOT.parent, env=env, capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["agents", "chat", "dashboard", "inbox", "status", "task", "tasks", "watches"]
