"""The whole ASGI application in process, as daphne serves it (Django's test client skips `api/handler.py`), and a
count of the hand-offs to sync threads a request makes there."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from asgiref.sync import SyncToAsync


def asgi_client() -> httpx.AsyncClient:
    from a2aconsole.asgi import application

    return httpx.AsyncClient(transport=httpx.ASGITransport(app=application), base_url="http://testserver")


def count_thread_hops(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """From now on (this test), the name of each function `sync_to_async` runs, appended to the list returned."""
    hops: list[str] = []
    real = SyncToAsync.__call__

    async def counted(self: SyncToAsync, *args: Any, **kwargs: Any) -> Any:
        hops.append(getattr(self.func, "__qualname__", repr(self.func)))
        return await real(self, *args, **kwargs)

    monkeypatch.setattr(SyncToAsync, "__call__", counted)
    return hops
