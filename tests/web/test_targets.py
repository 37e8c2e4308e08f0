"""Chat targets in the console pages and `manage.py targets`: add, edit, disable, tokens shown once."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from a2aconsole.web.models import ApiToken, ChatTarget, hash_token

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner(client, django_user_model):
    user = django_user_model.objects.create(username="owner")  # no password: hashing is slow, force_login needs none
    client.force_login(user)
    return client


def test_pages_need_login(client) -> None:
    assert client.get("/targets/").status_code == 302


def test_add_telegram_target_and_edit_it(owner, tmp_path: Path) -> None:
    resp = owner.post(
        "/targets/add/",
        {
            "id": "ops",
            "name": "Ops chat",
            "workspace": str(tmp_path),
            "backend": "telegram",
            "chat_id": "-100123",
            "enabled": "on",
        },
    )
    assert resp.status_code == 302 and resp["Location"] == "/targets/ops/"
    t = ChatTarget.objects.get(pk="ops")
    assert (t.backend, t.backend_settings, t.enabled) == ("telegram", {"chat_id": -100123}, True)

    page = owner.get("/targets/").content.decode()
    assert "Ops chat" in page and "Telegram chat -100123" in page

    resp = owner.post(
        "/targets/ops/",
        {
            "name": "Ops",
            "workspace": str(tmp_path),
            "backend": "telegram",
            "chat_id": "@opschannel",
            "token_env": "OPS_BOT_TOKEN",
            "enabled": "on",
        },
    )
    assert resp.status_code == 302
    t.refresh_from_db()
    assert t.name == "Ops" and t.backend_settings == {"chat_id": "@opschannel", "token_env": "OPS_BOT_TOKEN"}


def test_bad_fields_are_shown_beside_them(owner, tmp_path: Path) -> None:
    resp = owner.post(
        "/targets/add/",
        {"id": "Bad Id", "name": "x", "workspace": "relative/path", "backend": "webhook", "url": "ftp://x"},
    )
    assert resp.status_code == 200
    page = resp.content.decode()
    assert "Use 1-64 of a-z" in page and "Enter an absolute path" in page and "http:// or https:// URL" in page
    assert not ChatTarget.objects.exists()


def test_webhook_secret_shown_once(owner, tmp_path: Path) -> None:
    resp = owner.post(
        "/targets/add/",
        {
            "id": "host",
            "name": "Host",
            "workspace": str(tmp_path),
            "backend": "webhook",
            "url": "https://host.example/a2a",
            "enabled": "on",
        },
    )
    secret = ChatTarget.objects.get(pk="host").backend_settings["secret"]
    assert resp.status_code == 200 and secret in resp.content.decode()
    assert resp["Cache-Control"] == "no-store"
    edit = owner.get("/targets/host/").content.decode()
    assert secret not in edit
    assert 'value="https://host.example/a2a"' in edit and '<option value="webhook" selected>' in edit
    assert secret not in owner.get("/targets/").content.decode()

    # saving keeps the secret; asking for a new one shows the new one once
    data = {
        "name": "Host",
        "workspace": str(tmp_path),
        "backend": "webhook",
        "url": "https://host.example/a2a",
        "enabled": "on",
    }
    assert owner.post("/targets/host/", data).status_code == 302
    assert ChatTarget.objects.get(pk="host").backend_settings["secret"] == secret
    resp = owner.post("/targets/host/", {**data, "new_secret": "on"})
    new = ChatTarget.objects.get(pk="host").backend_settings["secret"]
    assert new != secret and new in resp.content.decode()


def test_tokens_shown_once_stored_hashed_and_revocable(owner, tmp_path: Path) -> None:
    ChatTarget.objects.create(id="bot", name="Bot", workspace=str(tmp_path))
    resp = owner.post("/targets/bot/tokens/", {"name": "my host"})
    page = resp.content.decode()
    row = ApiToken.objects.get()
    token = page.split('id="new-token">')[1].split("<")[0]
    assert token.startswith("a2ac_") and row.token_hash == hash_token(token) and row.name == "my host"
    detail = owner.get("/targets/bot/").content.decode()
    assert token not in detail and f"{row.prefix}…" in detail

    assert owner.post(f"/targets/bot/tokens/{row.pk}/revoke/").status_code == 302
    row.refresh_from_db()
    assert row.revoked_at is not None
    assert "revoked" in owner.get("/targets/bot/").content.decode()
    assert owner.post(f"/targets/other/tokens/{row.pk}/revoke/").status_code == 404


def test_disable_and_enable(owner, tmp_path: Path) -> None:
    ChatTarget.objects.create(id="bot", name="Bot", workspace=str(tmp_path))
    owner.post("/targets/bot/enabled/", {"enabled": "0"})
    assert not ChatTarget.objects.get(pk="bot").enabled
    owner.post("/targets/bot/enabled/", {"enabled": "1"})
    assert ChatTarget.objects.get(pk="bot").enabled


def run(*args: str) -> str:
    out = io.StringIO()
    call_command("targets", *args, stdout=out)
    return out.getvalue()


def test_targets_command(tmp_path: Path) -> None:
    out = run(
        "add",
        "host",
        "--name",
        "Host",
        "--workspace",
        str(tmp_path),
        "--backend",
        "webhook",
        "--url",
        "https://host.example/hook",
    )
    secret = ChatTarget.objects.get(pk="host").backend_settings["secret"]
    assert "Added chat target host" in out and secret in out

    out = run("token", "host", "--name", "ci")
    token = out.strip().splitlines()[-1]
    assert ApiToken.objects.get().token_hash == hash_token(token)

    listing = run("list")
    assert "host  Host  [webhook, enabled]" in listing and "https://host.example/hook" in listing
    assert secret not in listing and token not in listing and f"token {token[:12]}…  ci  active" in listing

    run("edit", "host", "--name", "Renamed")
    assert ChatTarget.objects.get(pk="host").name == "Renamed"
    assert ChatTarget.objects.get(pk="host").backend_settings["secret"] == secret
    run("disable", "host")
    assert not ChatTarget.objects.get(pk="host").enabled
    assert "Revoked 1 token(s)" in run("revoke", "host", token[:12])
    assert ApiToken.objects.get().revoked_at is not None

    with pytest.raises(CommandError, match="--chat-id"):
        run("add", "tg", "--name", "T", "--workspace", str(tmp_path), "--backend", "telegram")
    with pytest.raises(CommandError, match="unknown chat target 'nope'"):
        run("token", "nope")
