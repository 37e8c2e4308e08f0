"""The core must be usable without Django or Channels: import all of it in a fresh interpreter and look (what
import-linter's contract reads from the source, at run time: an import made by a library counts too)."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import a2aconsole.core


def test_core_imports_no_django_or_channels() -> None:
    modules = [m.name for m in pkgutil.walk_packages(a2aconsole.core.__path__, "a2aconsole.core.")]
    assert len(modules) >= 40 and "a2aconsole.core.watches.registry" in modules
    code = (
        "import sys\n"
        f"for m in {modules!r}: __import__(m)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('django', 'channels', 'daphne'))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"core pulled in: {out.stdout.strip()}"
