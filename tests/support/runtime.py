"""A process runtime for one test's event loop: built fresh (optionally with a fake clock), closed after."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

from a2aconsole.web.runtime import Runtime, build_runtime, close_runtime, install_runtime


@contextlib.asynccontextmanager
async def fresh_runtime(**parts: Any) -> AsyncIterator[Runtime]:
    await close_runtime()
    runtime = install_runtime(build_runtime(**parts))
    try:
        yield runtime
    finally:
        await close_runtime()
