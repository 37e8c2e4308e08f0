"""Unknown addresses get the console's own page in owner words, not Django's bare one."""

from __future__ import annotations

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
