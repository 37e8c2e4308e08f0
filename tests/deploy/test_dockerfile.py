"""The Dockerfile's HEALTHCHECK: its own command, run against a real web process, passes when ready and fails
when the database is gone."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from tests.support.daphne_process import DaphneProcess, closed_port
from tests.support.served_process import ROOT

IMAGE_URL = "http://127.0.0.1:8000"


def healthcheck_command() -> list[str]:
    text = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    (line,) = [ln for ln in text.splitlines() if ln.startswith("HEALTHCHECK ")]
    m = re.search(r"\bCMD (\[.*\])\s*$", line)
    assert m, line
    return json.loads(m.group(1))


def run_check(url: str) -> int:
    cmd = healthcheck_command()
    assert cmd[:2] == ["python", "-c"] and IMAGE_URL + "/readyz" in cmd[2]
    code = cmd[2].replace(IMAGE_URL, url)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=30).returncode


def test_healthcheck_passes_on_a_ready_process_whatever_its_allowed_hosts(tmp_path: Path) -> None:
    env = {"A2ACONSOLE_WATCH_WORKER": "external", "ALLOWED_HOSTS": "console.example", "DATABASE_URL": ""}
    with DaphneProcess(tmp_path, REDIS_URL="", **env) as server:
        assert run_check(server.url) == 0


def test_healthcheck_fails_when_the_database_is_unreachable(tmp_path: Path) -> None:
    url = f"postgres://u@127.0.0.1:{closed_port()}/db"
    with DaphneProcess(tmp_path, A2ACONSOLE_WATCH_WORKER="external", DATABASE_URL=url, REDIS_URL="") as server:
        assert run_check(server.url) != 0
