"""deploy/compose.yaml parses, uses only this project's image and official ones, runs only real management
commands, wires the services together, and mounts an nginx config that upgrades /ws/ without stickiness.
(Docker is not run here: only the client exists on test machines.)"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml
from django.core.management import get_commands

from a2aconsole.public_site import load_public_site
from a2aconsole.web.process.runtime import WORKER_CHANNEL

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "deploy" / "compose.yaml"
OFFICIAL = {"postgres", "redis", "nginx", "caddy"}  # Docker Official Images: no namespace


@pytest.fixture(scope="module")
def services() -> dict[str, dict[str, Any]]:
    doc = yaml.safe_load(COMPOSE.read_text())
    assert isinstance(doc, dict) and isinstance(doc.get("services"), dict)
    return doc["services"]


def image_entrypoint() -> list[str]:
    (line,) = [ln for ln in (ROOT / "Dockerfile").read_text().splitlines() if ln.startswith("ENTRYPOINT ")]
    return json.loads(line.removeprefix("ENTRYPOINT "))


def argv(value: Any) -> list[str]:
    if value is None:
        return []
    return list(value) if isinstance(value, list) else shlex.split(str(value))


def builds_ours(svc: dict[str, Any]) -> bool:
    build = svc.get("build")
    if build is None:
        return False
    context = build if isinstance(build, str) else build.get("context", ".")
    dockerfile = "Dockerfile" if isinstance(build, str) else build.get("dockerfile", "Dockerfile")
    return (COMPOSE.parent / context / dockerfile).resolve() == (ROOT / "Dockerfile").resolve()


def command_of(svc: dict[str, Any]) -> list[str]:
    """What runs in a container of our image: the entrypoint (the service's, else the image's) and command."""
    return argv(svc["entrypoint"]) if "entrypoint" in svc else image_entrypoint() + argv(svc.get("command"))


def ours(services: dict[str, dict[str, Any]]) -> dict[str, list[str]]:
    return {name: command_of(svc) for name, svc in services.items() if builds_ours(svc)}


def host_of(url: str) -> str | None:
    """The host of a URL whose parts may be compose variables (`${POSTGRES_PASSWORD:?...}`)."""
    return urlsplit(re.sub(r"\$\{[^}]*\}", "x", url)).hostname


def role(cmd: list[str]) -> str:
    i = cmd.index("manage.py")
    return cmd[i + 1]


def test_images_are_ours_or_official(services: dict[str, dict[str, Any]]) -> None:
    for name, svc in services.items():
        if builds_ours(svc):
            continue
        image = str(svc.get("image", ""))
        repo = image.split("@")[0].rsplit(":", 1)[0] if ":" in image.split("/")[-1] else image
        assert repo in OFFICIAL, f"{name}: image {image!r} is neither built from ./Dockerfile nor official"


def test_every_command_is_a_management_command(services: dict[str, dict[str, Any]]) -> None:
    commands = get_commands()
    found = ours(services)
    assert found
    for name, cmd in found.items():
        assert cmd[:2] == ["python", "manage.py"], (name, cmd)
        assert role(cmd) in commands, f"{name}: manage.py {role(cmd)} is not a command of this project"
        if role(cmd) == "runworker":
            assert cmd[3:] == [WORKER_CHANNEL], (name, cmd)
        if role(cmd) == "serve":
            assert "--host" in cmd and cmd[cmd.index("--host") + 1] == "0.0.0.0", (name, cmd)


def test_the_scale_out_has_two_web_processes_two_workers_and_the_services(services: dict[str, dict[str, Any]]) -> None:
    roles = {name: role(cmd) for name, cmd in ours(services).items()}
    web = [n for n, r in roles.items() if r == "serve"]
    workers = [n for n, r in roles.items() if r == "runworker"]
    assert len(web) == 2 and len(workers) == 2, roles
    by_image = {str(svc.get("image", "")).split(":")[0]: name for name, svc in services.items()}
    assert {"postgres", "redis"} <= set(by_image) and ({"nginx", "caddy"} & set(by_image))

    for name in web + workers:
        env = services[name]["environment"]
        assert {"DATABASE_URL", "REDIS_URL", "SECRET_KEY", "ALLOWED_HOSTS"} <= set(env), name
        assert env["A2ACONSOLE_WATCH_WORKER"] == "external", name
        assert host_of(env["DATABASE_URL"]) == by_image["postgres"]
        assert host_of(env["REDIS_URL"]) == by_image["redis"]
        assert "workspace:/workspace" in services[name]["volumes"], f"{name}: the workspace volume is shared"
        deps = services[name]["depends_on"]
        assert deps["migrate"]["condition"] == "service_completed_successfully"

    for name in web:
        check = " ".join(services[name]["healthcheck"]["test"])
        assert "http://127.0.0.1:8000/readyz" in check, name
    for name in workers:
        port = services[name]["environment"]["A2ACONSOLE_METRICS_PORT"].rsplit(":", 1)[1]
        assert f"http://127.0.0.1:{port}/healthz" in " ".join(services[name]["healthcheck"]["test"]), name
    assert role(ours(services)["migrate"]) == "migrate"


def test_the_proxy_routes_ws_with_upgrade_to_both_web_processes(services: dict[str, dict[str, Any]]) -> None:
    proxy = next(svc for svc in services.values() if str(svc.get("image", "")).startswith("nginx:"))
    mounts = [v.split(":") for v in proxy["volumes"]]
    (source,) = [src for src, target, *_ in mounts if target.startswith("/etc/nginx/")]
    conf_path = (COMPOSE.parent / source).resolve()
    assert conf_path.is_file() and ROOT in conf_path.parents
    conf = re.sub(r"#[^\n]*", "", conf_path.read_text())

    upstreams = dict(re.findall(r"upstream\s+(\S+)\s*\{([^}]*)\}", conf))
    assert len(upstreams) == 1
    ((up_name, body),) = upstreams.items()
    servers = re.findall(r"server\s+([\w.-]+):(\d+)", body)
    web = {n for n, cmd in ours(services).items() if role(cmd) == "serve"}
    assert {s for s, port in servers if port == "8000"} == web
    assert not re.search(r"\b(ip_hash|hash|sticky)\b", body), "no sticky sessions"

    ws = re.search(r"location\s+/ws/\s*\{([^}]*)\}", conf)
    assert ws, "a location for /ws/"
    block = ws.group(1)
    assert f"proxy_pass http://{up_name};" in block
    assert "proxy_http_version 1.1;" in block
    assert re.search(r"proxy_set_header\s+Upgrade\s+\$http_upgrade;", block)
    assert re.search(r"proxy_set_header\s+Connection\s+\$connection_upgrade;", block)
    assert re.search(r"map\s+\$http_upgrade\s+\$connection_upgrade\s*\{[^}]*default\s+upgrade;", conf)
    # the browser's Host with its port: Django's CSRF check compares it with the Origin of every POST
    hosts = re.findall(r"proxy_set_header\s+Host\s+(\S+);", conf)
    assert hosts and set(hosts) == {"$http_host"}, hosts
    root = re.search(r"location\s+/\s*\{([^}]*)\}", conf)
    assert root and f"proxy_pass http://{up_name};" in root.group(1)


def _nginx_conf(services: dict[str, dict[str, Any]]) -> str:
    proxy = next(svc for svc in services.values() if str(svc.get("image", "")).startswith("nginx:"))
    (source,) = [v.split(":")[0] for v in proxy["volumes"] if v.split(":")[1].startswith("/etc/nginx/")]
    return re.sub(r"#[^\n]*", "", (COMPOSE.parent / source).read_text())


def test_the_console_trusts_the_proxy_which_sets_the_clients_own_address(services: dict[str, dict[str, Any]]) -> None:
    """Each browser has its own login throttle: nginx sets X-Forwarded-For (a client's own value is dropped) and the
    console reads it, so five wrong passwords from anyone no longer lock the owner out."""
    conf = _nginx_conf(services)
    forwarded_for = re.findall(r"proxy_set_header\s+X-Forwarded-For\s+(\S+);", conf)
    assert forwarded_for and set(forwarded_for) == {"$remote_addr"}, forwarded_for
    assert set(re.findall(r"proxy_set_header\s+X-Forwarded-Proto\s+(\S+);", conf)) == {"$scheme"}
    app = {name: svc for name, svc in services.items() if builds_ours(svc)}
    assert all("ports" not in svc for svc in app.values()), "only the proxy is reachable: trusting it is safe"
    for name, svc in app.items():
        env = {k: ("" if v is None else str(v)) for k, v in svc["environment"].items()}
        env = {k: re.sub(r"\$\{[^}:]*:-([^}]*)\}", r"\1", v) for k, v in env.items()}  # compose's defaults
        site = load_public_site(env)
        assert site.trust_proxy and not site.ssl_redirect, name
        # with an https public URL (a TLS proxy in front of nginx) no redirect loop either
        assert not load_public_site({**env, "A2ACONSOLE_PUBLIC_URL": "https://console.example"}).ssl_redirect, name
