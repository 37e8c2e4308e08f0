"""A process runtime for one test's event loop: built fresh (optionally with a fake clock), closed after."""

from __future__ import annotations

import asyncio
import contextlib
import io
from collections.abc import AsyncIterator
from typing import Any

import pytest

from a2aconsole.web.process.runtime import Runtime, build_runtime, close_runtime, install_runtime

CLOSE_SECONDS = 60.0  # a runtime closes in a moment; one that hangs fails the test with what it waits on


@contextlib.asynccontextmanager
async def fresh_runtime(**parts: Any) -> AsyncIterator[Runtime]:
    await close_runtime()
    runtime = install_runtime(build_runtime(**parts))
    try:
        yield runtime
    finally:
        await close_within(CLOSE_SECONDS)


async def close_within(seconds: float) -> None:
    """`close_runtime`, or a failure naming every task of the loop and where each waits."""
    try:
        async with asyncio.timeout(seconds):
            await close_runtime()
    except TimeoutError:
        out = io.StringIO()
        for task in asyncio.all_tasks():
            task.print_stack(file=out)
        pytest.fail(f"the runtime did not close within {seconds:g} s; the loop's tasks:\n{out.getvalue()}")
