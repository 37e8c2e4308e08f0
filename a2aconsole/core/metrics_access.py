"""Who may read `/metrics`: a bearer token and/or a list of client addresses, from the environment.

Neither set means the endpoint does not exist (404), so nothing leaks by default. The token is compared
in constant time and never shown: not in errors, not in the settings' repr (Django's debug page).
"""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass, field

from a2aconsole.core.errors import ConfigError

TOKEN_ENV = "A2ACONSOLE_METRICS_TOKEN"
ALLOW_ENV = "A2ACONSOLE_METRICS_ALLOW"
MIN_TOKEN_LENGTH = 16

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


@dataclass(frozen=True)
class MetricsAccess:
    token: str | None = field(default=None, repr=False)
    networks: tuple[Network, ...] = ()

    @property
    def enabled(self) -> bool:
        return bool(self.token) or bool(self.networks)

    def answer(self, remote_addr: str | None, authorization: str | None) -> int:
        """The status to give a scrape: 200 serve it; 404 metrics are off; 403 the address is not allowed;
        401 the token is missing or wrong (the same answer for both)."""
        if not self.enabled:
            return 404
        if self.networks and not self.allows(remote_addr):
            return 403
        if self.token and not self.token_matches(authorization):
            return 401
        return 200

    def allows(self, remote_addr: str | None) -> bool:
        try:
            addr = ipaddress.ip_address((remote_addr or "").strip())
        except ValueError:
            return False
        if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
            addr = addr.ipv4_mapped
        return any(addr in net for net in self.networks)

    def token_matches(self, authorization: str | None) -> bool:
        scheme, _, value = (authorization or "").partition(" ")
        given = value.strip() if scheme.lower() == "bearer" else ""
        return hmac.compare_digest(given.encode(), (self.token or "").encode())


def load_metrics_access(env: Mapping[str, str]) -> MetricsAccess:
    """Parse the two variables; a bad value raises ConfigError naming the variable (never the token)."""
    token = (env.get(TOKEN_ENV) or "").strip() or None
    if token is not None and (len(token) < MIN_TOKEN_LENGTH or any(c.isspace() for c in token)):
        raise ConfigError(
            f"{TOKEN_ENV}: expected a token of at least {MIN_TOKEN_LENGTH} characters without spaces "
            "(e.g. from `python -c 'import secrets; print(secrets.token_urlsafe(32))'`)"
        )
    raw = env.get(ALLOW_ENV) or ""
    networks: list[Network] = []
    for part in (p.strip() for p in raw.split(",")):
        if not part:
            continue
        try:
            networks.append(ipaddress.ip_network(part, strict=False))
        except ValueError:
            raise ConfigError(
                f"{ALLOW_ENV}={raw!r}: expected IP addresses or networks separated by commas, e.g. 127.0.0.1,10.0.0.0/8"
            ) from None
    if raw.strip() and not networks:
        raise ConfigError(f"{ALLOW_ENV}={raw!r}: expected IP addresses or networks separated by commas")
    return MetricsAccess(token=token, networks=tuple(networks))


LISTEN_ENV = "A2ACONSOLE_METRICS_PORT"


def load_metrics_listen(env: Mapping[str, str]) -> tuple[str, int] | None:
    """Where a worker serves its metrics: `A2ACONSOLE_METRICS_PORT` as `port` (loopback) or `host:port`."""
    raw = (env.get(LISTEN_ENV) or "").strip()
    if not raw:
        return None
    host, _, port = raw.rpartition(":")
    host = host.strip("[]") or "127.0.0.1"
    if not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ConfigError(f"{LISTEN_ENV}={raw!r}: expected a port (9100) or host:port (0.0.0.0:9100)")
    return host, int(port)
