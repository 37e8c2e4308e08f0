"""Every live page is registered in a fresh process. (Which floor imports which is import-linter's: the
contracts in pyproject.toml, run by `make lint`.)"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import a2aconsole
from tests.web.test_settings import clean_env

ROOT = Path(a2aconsole.__file__).parent


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
