"""Unknown addresses get the console's own page in owner words, not Django's bare one."""

from __future__ import annotations

import httpx
import pytest
from django.contrib.auth.models import User
from django.test import Client


@pytest.mark.django_db
def test_unknown_agent_page_is_a_friendly_404() -> None:
    c = Client()
    c.force_login(User.objects.create_superuser("owner", password="a long enough password"))
    r = c.get("/agent/no-such-agent/")
    assert r.status_code == 404
    body = r.content.decode()
    assert "Not found" in body and "Back to the dashboard" in body
    assert 'aria-label="Main"' in body  # the console's layout, with its navigation


@pytest.mark.django_db(transaction=True)
async def test_a_broken_form_body_on_an_unknown_path_is_a_4xx_not_a_500() -> None:
    """Django's error views check the CSRF token, which parses the body: a multipart body with no boundary used to
    turn the 404 page into a 500 (found by fuzzing the push receiver). Through the ASGI app, as served."""
    from a2aconsole.asgi import application

    transport = httpx.ASGITransport(app=application)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        for path in ("/a2a/push/", "/no-such-page/"):
            headers = {"Content-Type": "multipart/form-data", "Cookie": "csrftoken=" + "a" * 32}  # a browser's cookie
            r = await client.post(path, content=b"--x--", headers=headers)
            assert r.status_code == 400, (path, r.status_code)
