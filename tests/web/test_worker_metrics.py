"""A `runworker a2a-watches` process serves its own metrics on A2ACONSOLE_METRICS_PORT, behind the same token."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import httpx
from prometheus_client.parser import text_string_to_metric_families

from tests.support.served_process import ROOT

TOKEN = "worker-metrics-token-77aa01"


def test_runworker_serves_metrics_with_its_lease(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (tmp_path / "data").mkdir()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("A2ACONSOLE_", "REDIS_URL"))},
        "DJANGO_SETTINGS_MODULE": "a2aconsole.settings",
        "A2ACONSOLE_DATA": str(tmp_path / "data"),
        "A2ACONSOLE_WORKSPACE": str(ws),
        "A2ACONSOLE_METRICS_TOKEN": TOKEN,
        "A2ACONSOLE_METRICS_PORT": "127.0.0.1:0",
        "SECRET_KEY": "worker-metrics-tests-only",
    }
    env.pop("DATABASE_URL", None)
    manage = [sys.executable, "manage.py"]
    subprocess.run([*manage, "migrate", "-v0"], cwd=ROOT, env=env, check=True, timeout=120)
    proc = subprocess.Popen([*manage, "runworker", "a2a-watches"], cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    started = threading.Event()

    def read() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line.rstrip())
            if "watch worker started" in line:
                started.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        assert started.wait(60), "\n".join(lines)
        (where,) = [line.split("metrics on ")[1] for line in lines if "metrics on http://" in line]
        base = where.removesuffix("/metrics")
        assert httpx.get(f"{base}/healthz", timeout=10).text == "ok\n"
        assert httpx.get(f"{base}/metrics", timeout=10).status_code == 401
        assert httpx.get(f"{base}/metrics", headers={"Authorization": "Bearer nope"}, timeout=10).status_code == 401
        r = httpx.get(f"{base}/metrics", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10)
        assert r.status_code == 200
        held = {
            s.labels["workspace"]: s.value
            for f in text_string_to_metric_families(r.text)
            for s in f.samples
            if s.name == "a2aconsole_worker_lease_held"
        }
        assert held == {str(ws.resolve()): 1.0}
        assert "a2aconsole_watches" in r.text and TOKEN not in r.text
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        reader.join(timeout=5)
        if proc.stderr is not None:
            proc.stderr.close()
