"""Bad input from the owner (target forms) and in a result (Telegram counts UTF-16): refused or handled cleanly."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from a2aconsole.web.delivery.telegram import LIMIT, split_text, units
from a2aconsole.web.models import ChatTarget

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner(client: Any, django_user_model: Any) -> Any:
    client.force_login(django_user_model.objects.create(username="owner"))
    return client


def test_bad_target_forms_say_what_is_wrong_and_save_nothing(owner: Any, tmp_path: Path) -> None:
    good = {"id": "ops", "name": "Ops", "workspace": str(tmp_path), "backend": "telegram", "chat_id": "42"}
    cases: list[tuple[dict[str, str], str]] = [
        ({"id": "../etc"}, "Use 1-64 of a-z"),
        ({"id": "ops\x00"}, "Null characters are not allowed"),
        ({"id": "x" * 65}, "at most 64 characters"),
        ({"id": "add"}, "reserved"),
        ({"name": "n" * 201}, "at most 200 characters"),
        ({"name": "bad\x00name"}, "Null characters are not allowed"),
        ({"workspace": "relative"}, "absolute path"),
        ({"workspace": str(tmp_path / "missing")}, "No such folder"),
        ({"workspace": str(tmp_path / "f.txt")}, "No such folder"),
        ({"backend": "carrier-pigeon"}, "Select a valid choice"),
        ({"chat_id": "12; DROP TABLE"}, "Enter the Telegram chat id"),
        ({"chat_id": ""}, "Enter the Telegram chat id"),
        ({"token_env": "NOT-A-NAME"}, "environment variable name"),
        ({"backend": "webhook", "url": "javascript:alert(1)"}, "http:// or https:// URL"),
        ({"backend": "webhook", "url": "http://"}, "http:// or https:// URL"),
        ({"backend": "webhook", "url": "http://host:99999/"}, "http:// or https:// URL"),
        ({"backend": "webhook", "url": "http://h/ x"}, "http:// or https:// URL"),
        ({"backend": "webhook", "url": "http://h/" + "x" * 2000}, "at most 2000 characters"),
    ]
    (tmp_path / "f.txt").write_text("a file, not a folder")
    for change, expected in cases:
        resp = owner.post("/targets/add/", {**good, **change})
        assert resp.status_code == 200, change
        assert expected in resp.content.decode(), change
        assert not ChatTarget.objects.exists(), change
    assert owner.post("/targets/nope/", good).status_code == 404
    assert owner.post("/targets/nope/enabled/", {"enabled": "0"}).status_code == 404
    assert owner.post("/targets/nope/tokens/").status_code == 404
    assert owner.post("/targets/nope/tokens/1/revoke/").status_code == 404


def test_webhook_url_secrets_stay_off_the_edit_page_and_survive_a_save(owner: Any, tmp_path: Path) -> None:
    full = "https://bot:PASS-x1@hooks.example.com:8443/in?sig=QUERY-y2#frag"
    ChatTarget.objects.create(
        id="hook",
        name="Hook",
        workspace=str(tmp_path),
        backend="webhook",
        backend_settings={"url": full, "secret": "s"},
    )
    page = owner.get("/targets/hook/").content.decode()
    assert "PASS-x1" not in page and "QUERY-y2" not in page
    assert 'value="https://hooks.example.com:8443/in"' in page
    form = {"name": "Hook 2", "workspace": str(tmp_path), "backend": "webhook", "enabled": "on"}
    assert owner.post("/targets/hook/", {**form, "url": "https://hooks.example.com:8443/in"}).status_code == 302
    target = ChatTarget.objects.get(pk="hook")
    assert target.name == "Hook 2" and target.backend_settings == {"url": full, "secret": "s"}  # kept as it was
    assert owner.post("/targets/hook/", {**form, "url": "https://new.example.com/in?sig=NEW"}).status_code == 302
    target.refresh_from_db()
    assert target.backend_settings["url"] == "https://new.example.com/in?sig=NEW"


def test_telegram_split_counts_utf16_units_like_telegram() -> None:
    """Emoji outside the BMP count twice: a piece of 4096 of them would be refused, and retried forever."""
    text = "header\n" + "🌍" * 5000 + "\n" + "é" * 5000
    pieces = split_text(text)
    assert all(units(p) <= LIMIT for p in pieces)
    assert "".join(pieces) == text.replace("\n", "")
    assert all(not ("\ud800" <= p[-1] <= "\udfff") for p in pieces)  # no half of a surrogate pair
