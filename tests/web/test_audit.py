"""The audit log: each agent edit, API token change, login and password change is recorded after it
succeeded (who, when, what), shown newest first on the Audit page, and never carries a key or token."""

from __future__ import annotations

import json
import logging
from datetime import timedelta
from pathlib import Path

import pytest
from django.db import connection
from django.test import Client
from django.utils import timezone

from a2aconsole.core.files.workspace import Workspace
from a2aconsole.web.audit import AFTER_CONFLICT, FILE_KEPT_YOURS
from a2aconsole.web.models import ApiToken, AuditEntry, ChatTarget
from a2aconsole.web.views.agents import CONFLICT_PAGE
from tests.support.console import create_owner

pytestmark = pytest.mark.django_db

KEY = "k-AUDIT-NEVER-SHOWN-41"
KEY2 = "k-AUDIT-NEVER-SHOWN-42"
URL_SECRET = "pw-AUDIT-NEVER-SHOWN"
SECRETS = (KEY, KEY2, URL_SECRET)


@pytest.fixture
def owner(client: Client, settings: object) -> Client:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # type: ignore[attr-defined]
    client.force_login(create_owner())
    AuditEntry.objects.all().delete()  # the forced login is recorded too; each test starts from its own changes
    return client


def entries() -> list[tuple[str, str, str]]:
    """(action, subject, detail) of every entry, oldest first."""
    return [(e.action, e.subject, e.detail) for e in AuditEntry.objects.order_by("at", "id")]


def version(ws: Workspace) -> str:
    return ws.read_agents().version


def test_agent_add_edit_delete_and_file_saves_are_recorded(owner: Client, ws: Workspace) -> None:
    url = f"http://u:{URL_SECRET}@127.0.0.1:9/a2a?x=1"
    add = {"name": "bot", "url": url, "key": KEY, "version": version(ws)}
    assert owner.post("/agents/add/", add).status_code == 302
    edit = {"name": "bot", "url": "http://127.0.0.1:9/a2a", "key": KEY2, "description": "d", "version": version(ws)}
    assert owner.post("/agent/bot/edit/", edit).status_code == 302
    rename = {"name": "robot", "url": "http://127.0.0.1:9/b", "remove_key": "on", "version": version(ws)}
    assert owner.post("/agent/bot/edit/", rename).status_code == 302
    raw = json.dumps([{"name": "robot", "url": "http://127.0.0.1:9/b"}, {"name": "two", "url": "http://127.0.0.1:9/"}])
    assert owner.post("/agents/file/", {"text": raw, "version": version(ws)}).status_code == 302
    assert owner.post("/agent/two/delete/", {"version": version(ws)}).status_code == 302
    assert [e.name for e in ws.read_agents().entries] == ["robot"]

    assert entries() == [
        ("agent-added", "bot", "URL http://127.0.0.1:9/a2a; key set"),
        ("agent-edited", "bot", "key replaced; description changed"),  # the URL shown masked: its hidden parts stay
        ("agent-edited", "robot", "renamed from bot; URL now http://127.0.0.1:9/b; key removed; description changed"),
        ("agents-file-saved", "agents.json", "added two"),
        ("agent-deleted", "two", "URL http://127.0.0.1:9/; no key"),
    ]
    first = AuditEntry.objects.order_by("at", "id").first()
    assert first is not None and first.username == "owner" and first.user is not None
    assert first.address == "127.0.0.1" and timezone.now() - first.at < timedelta(minutes=1)
    stored = json.dumps(list(AuditEntry.objects.values()), default=str)
    assert not any(s in stored for s in SECRETS)


def test_conflict_resolution_saves_say_so(owner: Client, ws: Workspace) -> None:
    ws.save_agents([{"name": "bot", "url": "http://127.0.0.1:9/", "key": KEY}], None)
    stale = version(ws)
    ws.save_agents([{"name": "bot", "url": "http://127.0.0.1:9/", "key": KEY, "description": "theirs"}], None)
    edit = {"name": "bot", "url": "http://127.0.0.1:9/", "description": "mine", "version": stale}
    conflict = owner.post("/agent/bot/edit/", edit)
    assert conflict.status_code == CONFLICT_PAGE and 'name="after_conflict" value="1"' in conflict.text
    assert entries() == []  # nothing saved, nothing recorded
    assert owner.post("/agent/bot/edit/", {**edit, "version": version(ws), "after_conflict": "1"}).status_code == 302

    text = json.dumps([{"name": "bot", "url": "http://127.0.0.1:9/", "key": "(hidden: the key stays as it is)"}])
    stale = version(ws)
    ws.save_agents([{"name": "bot", "url": "http://127.0.0.1:9/", "key": KEY, "description": "again"}], None)
    page = owner.post("/agents/file/", {"text": text, "version": stale})
    assert page.status_code == CONFLICT_PAGE and 'name="resolution" value="yours"' in page.text
    resolved = owner.post("/agents/file/", {"text": text, "version": version(ws), "resolution": "yours"})
    assert resolved.status_code == 302

    stale = version(ws)
    ws.save_agents([{"name": "bot", "url": "http://127.0.0.1:9/", "key": KEY, "description": "3rd"}], None)
    page = owner.post("/agent/bot/delete/", {"version": stale})
    assert page.status_code == CONFLICT_PAGE and 'name="after_conflict" value="1"' in page.text
    assert owner.post("/agent/bot/delete/", {"version": version(ws), "after_conflict": "1"}).status_code == 302

    assert entries() == [
        ("agent-edited", "bot", f"description changed; {AFTER_CONFLICT}"),
        ("agents-file-saved", "agents.json", f"changed bot; {FILE_KEPT_YOURS}"),
        ("agent-deleted", "bot", f"URL http://127.0.0.1:9/; key set; {AFTER_CONFLICT}"),
    ]
    assert ws.read_agents().entries == []


def test_refused_saves_are_not_recorded(owner: Client, ws: Workspace) -> None:
    assert owner.post("/agents/add/", {"name": "Bad Name", "url": "ftp://x", "version": version(ws)}).status_code == 400
    assert owner.post("/agents/file/", {"text": "[", "version": version(ws)}).status_code == 400
    assert entries() == []


def test_token_creation_and_revocation_are_recorded_without_the_token(owner: Client, tmp_path: Path) -> None:
    ChatTarget.objects.create(id="host", name="Host", workspace=str(tmp_path))
    page = owner.post("/targets/host/tokens/", {"name": "ci runner"}).content.decode()
    token = page.split('id="new-token">')[1].split("<")[0]
    row = ApiToken.objects.get()
    assert owner.post(f"/targets/host/tokens/{row.pk}/revoke/").status_code == 302
    assert owner.post(f"/targets/host/tokens/{row.pk}/revoke/").status_code == 302  # already revoked: no entry
    owner.post("/targets/host/tokens/", {"name": ""})
    unnamed = ApiToken.objects.exclude(pk=row.pk).get()

    assert entries() == [
        ("token-created", "ci runner", f"token #{row.pk}"),
        ("token-revoked", "ci runner", f"token #{row.pk}"),
        ("token-created", "(no label)", f"token #{unnamed.pk}"),
    ]
    assert set(AuditEntry.objects.values_list("target", flat=True)) == {"host"}
    audit = owner.get("/audit/").content.decode()
    assert "ci runner" in audit and 'href="/targets/host/"' in audit
    assert token not in audit and row.prefix not in audit and row.token_hash not in audit


def test_login_and_owner_creation_are_recorded(client: Client, settings: object, tmp_path: Path) -> None:
    from a2aconsole.web import owner

    settings.DATA_DIR = tmp_path / "data"  # type: ignore[attr-defined]
    token = owner.issue_setup_token()
    password = "a long enough password 7"
    data = {"username": "alice", "password1": password, "password2": password}
    assert client.post(f"/setup/{token}/", data).status_code == 302
    client.post("/logout/")
    assert client.post("/login/", {"username": "alice", "password": "wrong one"}).status_code == 200
    assert client.post("/login/", {"username": "alice", "password": password}).status_code == 302
    assert entries() == [("owner-created", "alice", ""), ("login", "", ""), ("login", "", "")]
    assert {(e.username, e.address) for e in AuditEntry.objects.all()} == {("alice", "127.0.0.1")}


def logs_in(client: Client, password: str) -> bool:
    """A login through the login form (django-axes needs the request Client.login does not pass)."""
    return client.post("/login/", {"username": "owner", "password": password}).status_code == 302


def test_password_change(owner: Client) -> None:
    page = owner.get("/")
    assert 'href="/password/"' in page.text and 'href="/audit/"' in page.text  # in the layout's header
    form = owner.get("/password/")
    assert form.status_code == 200 and 'name="old_password"' in form.text and 'aria-current="page"' in form.text
    other = Client()
    assert logs_in(other, "a long password 1")

    wrong = owner.post("/password/", {"old_password": "not it", "new_password1": "x" * 12, "new_password2": "x" * 12})
    assert wrong.status_code == 200 and "old password was entered incorrectly" in wrong.text
    weak = owner.post(
        "/password/", {"old_password": "a long password 1", "new_password1": "password", "new_password2": "password"}
    )
    assert weak.status_code == 200 and "too short" in weak.text and "too common" in weak.text  # our validators
    assert logs_in(Client(), "a long password 1")
    assert entries() == [("login", "", ""), ("login", "", "")]  # the two logins above; nothing changed

    new = "a brand new password 9"
    done = owner.post("/password/", {"old_password": "a long password 1", "new_password1": new, "new_password2": new})
    assert done.status_code == 302 and done["Location"] == "/"
    assert "Password changed" in owner.get("/").text  # still logged in here
    assert other.get("/").status_code == 302  # the other browser was logged out
    assert not logs_in(Client(), "a long password 1")
    fresh = Client()
    assert logs_in(fresh, new)
    assert fresh.get("/").status_code == 200
    assert [a for a, _, _ in entries()] == ["login", "login", "password-changed", "login"]
    stored = json.dumps(list(AuditEntry.objects.values()), default=str)
    assert new not in stored and "a long password 1" not in stored


def test_audit_page_newest_first_paginated(owner: Client) -> None:
    start = timezone.now() - timedelta(days=1)
    AuditEntry.objects.bulk_create(
        AuditEntry(at=start + timedelta(minutes=i), username="owner", action="agent-edited", subject=f"agent-{i:02}")
        for i in range(60)
    )
    first = owner.get("/audit/").text
    assert first.index("agent-59") < first.index("agent-58") and "agent-10" in first and "agent-09" not in first
    assert "Entries 1–50 of 60" in first and 'href="?page=2"' in first and "Edited an agent" in first
    second = owner.get("/audit/?page=2").text
    assert "agent-09" in second and "agent-00" in second and "agent-10" not in second and 'href="?page=1"' in second
    assert "agent-00" in owner.get("/audit/?page=99").text and "agent-59" in owner.get("/audit/?page=x").text
    AuditEntry.objects.all().delete()
    assert "Nothing recorded yet" in owner.get("/audit/").text


def test_a_failed_audit_write_keeps_the_change_and_is_logged(
    owner: Client, ws: Workspace, caplog: pytest.LogCaptureFixture
) -> None:
    with connection.cursor() as cursor:  # a real database failure (undone with the test's transaction)
        cursor.execute(f"DROP TABLE {AuditEntry._meta.db_table}")
    with caplog.at_level(logging.ERROR, logger="a2aconsole.web.audit"):
        add = {"name": "bot", "url": "http://127.0.0.1:9/", "key": KEY, "version": version(ws)}
        assert owner.post("/agents/add/", add).status_code == 302
    assert ws.read_agents().get("bot") is not None  # the file write stands
    [line] = [r.getMessage() for r in caplog.records if r.name == "a2aconsole.web.audit"]
    assert "audit entry not written" in line and "agent-added" in line and KEY not in line
