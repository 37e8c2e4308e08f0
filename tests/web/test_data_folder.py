"""The data folder (sessions, secret key, set-up token) is private: folder 0700 and every file 0600, the SQLite
database with its -wal and -shm files included, whatever the umask, for a new install and an old one alike."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

from a2aconsole.data_folder import is_private, make_private
from a2aconsole.web.management.commands.serve import describe_data_folder
from tests.web.test_settings import ROOT, clean_env

# migrate, then write (a user, a session) and list the data folder while the connection is open, so the
# -wal and -shm files exist
WRITE_AND_LIST = """
import json, os, stat, django
django.setup()
from django.core.management import call_command
call_command("migrate", verbosity=0)
from django.contrib.auth import get_user_model
from django.contrib.sessions.backends.db import SessionStore
get_user_model().objects.create_user("owner", password="a long password 1")
session = SessionStore()
session["seen"] = True
session.create()
data = os.environ["A2ACONSOLE_DATA"]
modes = {n: stat.S_IMODE(os.lstat(os.path.join(data, n)).st_mode) for n in os.listdir(data)}
modes["."] = stat.S_IMODE(os.stat(data).st_mode)
print(json.dumps(modes))
"""


def run_with_umask_022(data: Path, tmp: Path) -> dict[str, int]:
    env = clean_env(data, tmp / "ws", DJANGO_SETTINGS_MODULE="a2aconsole.settings")
    run = subprocess.run(
        [sys.executable, "-c", WRITE_AND_LIST],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=90,
        preexec_fn=lambda: os.umask(0o022),  # what most shells and containers run with
    )
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout.splitlines()[-1])


def assert_private(modes: dict[str, int]) -> None:
    assert modes.pop(".") == 0o700
    assert {"db.sqlite3", "db.sqlite3-wal", "db.sqlite3-shm", "secret_key"} <= set(modes)
    assert {name: oct(mode) for name, mode in modes.items() if mode != 0o600} == {}


def test_a_new_data_folder_and_every_file_in_it_are_private(tmp_path: Path) -> None:
    assert_private(run_with_umask_022(tmp_path / "data", tmp_path))


def test_an_existing_readable_data_folder_is_tightened_at_start(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    data.chmod(0o755)
    db = sqlite3.connect(data / "db.sqlite3")  # as an earlier version left it: WAL mode, 0644
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("CREATE TABLE t (x)")
    db.commit()
    db.close()
    (data / "db.sqlite3").chmod(0o644)
    (data / "secret_key").write_text("k" * 60)
    (data / "secret_key").chmod(0o644)
    (data / "setup_token").write_text("digest")
    (data / "setup_token").chmod(0o664)

    assert_private(run_with_umask_022(data, tmp_path))


def test_tightening_only_takes_permissions_away(tmp_path: Path) -> None:
    folder = tmp_path / "data"
    folder.mkdir(mode=0o500)
    (tmp_path / "elsewhere").write_text("not in the data folder")
    (tmp_path / "elsewhere").chmod(0o644)
    os.symlink(tmp_path / "elsewhere", tmp_path / "link")
    assert make_private(folder)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o500  # read-only stays read-only
    folder.chmod(0o755)
    os.symlink(tmp_path / "elsewhere", folder / "link")
    assert make_private(folder)
    assert stat.S_IMODE((tmp_path / "elsewhere").stat().st_mode) == 0o644  # a link's target is not ours to change


def test_serve_warns_when_the_data_folder_is_readable_by_others(tmp_path: Path) -> None:
    assert describe_data_folder(tmp_path / "new") == f"data folder: {tmp_path / 'new'}"
    tmp_path.chmod(0o755)
    assert not is_private(tmp_path)
    assert "WARNING: other users can enter it" in describe_data_folder(tmp_path)
    tmp_path.chmod(0o700)
    assert describe_data_folder(tmp_path) == f"data folder: {tmp_path}"
