"""The core must be usable without Django or Channels: import it in a fresh interpreter and look."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import a2aconsole.core


def test_core_imports_no_django_or_channels() -> None:
    modules = [f"a2aconsole.core.{m.name}" for m in pkgutil.iter_modules(a2aconsole.core.__path__)]
    assert len(modules) >= 8
    code = (
        "import sys\n"
        f"for m in {modules!r}: __import__(m)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('django', 'channels', 'daphne'))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"core pulled in: {out.stdout.strip()}"
