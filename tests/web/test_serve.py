"""What `manage.py serve` sets up before it listens: the workspace folder, the default chat, the client line."""

from __future__ import annotations

from pathlib import Path

import pytest

from a2aconsole.core.config import ClientSettings
from a2aconsole.web import bootstrap
from a2aconsole.web.management.commands.serve import _endpoint, _url, describe_client
from a2aconsole.web.models import ChatTarget


@pytest.mark.django_db
def test_console_target_is_ensured_once_and_follows_the_workspace_setting(settings: object, tmp_path: Path) -> None:
    settings.WORKSPACE_DIR = tmp_path / "ws"  # type: ignore[attr-defined]
    assert bootstrap.ensure_workspace_dir().is_dir()
    target = bootstrap.ensure_console_target()
    assert (target.id, target.backend, target.workspace) == ("console", "web", str(tmp_path / "ws"))
    ChatTarget.objects.filter(id="console").update(name="Mine", workspace="/elsewhere")
    again = bootstrap.ensure_console_target()
    assert again.name == "Mine"  # the owner's name stays
    assert again.workspace == str(tmp_path / "ws")  # A2ACONSOLE_WORKSPACE governs the folder at every start
    settings.WORKSPACE_DIR = tmp_path / "moved"  # type: ignore[attr-defined]  # a start with another value
    assert bootstrap.ensure_console_target().workspace == str(tmp_path / "moved")
    assert ChatTarget.objects.get(id="console").workspace == str(tmp_path / "moved")
    assert ChatTarget.objects.count() == 1


def test_client_line_says_on_or_off() -> None:
    assert describe_client(ClientSettings()).startswith("A2A client: on (wait 60 s, watch timeout 86400 s, no push")
    on = describe_client(ClientSettings(push_base_url="https://c.example"))
    assert "push to https://c.example" in on
    assert describe_client(ClientSettings(enabled=False)).startswith("A2A client: off")


def test_endpoints_and_urls_for_ipv4_and_ipv6() -> None:
    assert _endpoint("127.0.0.1", 8000) == "tcp:port=8000:interface=127.0.0.1"
    assert _endpoint("::1", 0) == r"tcp:port=0:interface=\:\:1"
    assert _url("0.0.0.0", 8000) == "http://127.0.0.1:8000"
    assert _url("::1", 8001) == "http://[::1]:8001"


@pytest.mark.django_db
def test_owner_step_of_serve(settings: object, tmp_path: Path) -> None:
    from django.core.management.base import CommandError

    from a2aconsole.web import owner
    from a2aconsole.web.management.commands.serve import Command

    settings.DATA_DIR = tmp_path  # type: ignore[attr-defined]
    settings.OWNER_PASSWORD = "Zq9!x"  # type: ignore[attr-defined]
    with pytest.raises(CommandError) as e:
        Command()._owner()
    assert e.value.returncode == 2 and "A2ACONSOLE_OWNER_PASSWORD" in str(e.value) and "Zq9!x" not in str(e.value)
    assert not owner.owner_exists()

    settings.OWNER_PASSWORD = None  # type: ignore[attr-defined]
    token = Command()._owner()
    assert token and owner.setup_token_valid(token)

    settings.OWNER_PASSWORD = "a long enough password"  # type: ignore[attr-defined]
    assert Command()._owner() is None
    assert owner.owner_exists() and not owner.setup_token_valid(token)
    assert Command()._owner() is None  # an existing owner is kept, the password is not reset
