"""`A2ACONSOLE_WORKSPACE` is the one source of truth of the `console` chat target's workspace: at every start,
in the CLI, and on the chat targets page, whatever an earlier start left in its row."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from a2aconsole.web import bootstrap
from a2aconsole.web.management.commands.a2a import target_of
from a2aconsole.web.models import ChatTarget

pytestmark = pytest.mark.django_db


@pytest.fixture
def first_start(settings, tmp_path: Path) -> Path:
    """A console started once with workspace `first`; the setting now says `second`."""
    settings.WORKSPACE_DIR = tmp_path / "first"
    bootstrap.ensure_workspace_dir()
    bootstrap.ensure_console_target()
    second = tmp_path / "second"
    second.mkdir()
    settings.WORKSPACE_DIR = second
    return second


def test_cli_uses_the_setting_not_a_stale_row(first_start: Path) -> None:
    assert ChatTarget.objects.get(id="console").workspace.endswith("first")  # not started again yet
    target = target_of("console")
    assert target is not None and target.workspace.root == first_start.resolve()


def test_targets_page_says_the_setting_governs_and_keeps_it(client, django_user_model, first_start: Path) -> None:
    bootstrap.ensure_console_target()  # the second start
    client.force_login(django_user_model.objects.create(username="owner"))
    listing = client.get("/targets/").content.decode()
    assert str(first_start) in listing and "A2ACONSOLE_WORKSPACE" in listing
    page = client.get("/targets/console/").content.decode()
    assert "comes from A2ACONSOLE_WORKSPACE" in page
    assert 'name="workspace"' in page and "disabled" in page.split('name="workspace"')[1].split(">")[0]
    resp = client.post("/targets/console/", {"name": "Console", "workspace": "/tmp", "backend": "web", "enabled": "on"})
    assert resp.status_code == 302
    assert ChatTarget.objects.get(id="console").workspace == str(first_start)  # a posted folder changes nothing


def test_targets_command_refuses_to_move_the_console_workspace(first_start: Path, tmp_path: Path) -> None:
    bootstrap.ensure_console_target()
    with pytest.raises(CommandError, match="A2ACONSOLE_WORKSPACE"):
        call_command("targets", "edit", "console", "--workspace", str(tmp_path), stdout=io.StringIO())
    call_command("targets", "edit", "console", "--name", "Mine", stdout=io.StringIO())
    row = ChatTarget.objects.get(id="console")
    assert (row.name, row.workspace) == ("Mine", str(first_start))
