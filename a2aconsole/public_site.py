"""The console as browsers reach it: its public URL, the proxy in front, and the HTTPS settings both imply.

One URL is the source of truth: `A2ACONSOLE_PUBLIC_URL`. Its origin is trusted for CSRF, its host is
allowed, an https URL turns on secure cookies and HSTS, and it is the push base URL unless
`A2AClient__PushBaseUrl` / `A2A__PublicUrl` name another address for agents only. A TLS-terminating proxy
is trusted (`X-Forwarded-Proto`, `X-Forwarded-For`) only when `A2ACONSOLE_TRUST_PROXY` says so, since
anyone can send those headers to a console that is reached directly.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from a2aconsole.core.config import parse_bool
from a2aconsole.core.errors import ConfigError

ONE_YEAR = 365 * 24 * 3600
PUSH_PATH = r"^a2a/push/"
DEFAULT_PORTS = {"http": 80, "https": 443}


@dataclass(frozen=True)
class PublicSite:
    """What the environment says about how browsers reach the console."""

    url: str | None = None
    trust_proxy: bool = False
    ssl_redirect: bool = False
    hsts_seconds: int = 0
    hsts_preload: bool = False

    @property
    def https(self) -> bool:
        return bool(self.url and self.url.startswith("https://"))

    @property
    def host(self) -> str | None:
        """The URL's host as ALLOWED_HOSTS spells it (an IPv6 address in brackets)."""
        if not self.url:
            return None
        host = urlsplit(self.url).hostname or ""
        return f"[{host}]" if ":" in host else host

    def django_settings(self, push_base_url: str | None) -> dict[str, Any]:
        """The Django settings this implies (hosts, CSRF, cookies, proxy, redirect, HSTS, axes' client address)."""
        redirect_exempt = []
        if self.ssl_redirect and push_base_url and push_base_url.startswith("http://"):
            redirect_exempt = [PUSH_PATH]  # agents told to push over plain http must not be redirected
        return {
            "CSRF_TRUSTED_ORIGINS": [self.url] if self.url else [],
            "SESSION_COOKIE_SECURE": self.https,
            "CSRF_COOKIE_SECURE": self.https,
            "SECURE_PROXY_SSL_HEADER": ("HTTP_X_FORWARDED_PROTO", "https") if self.trust_proxy else None,
            "SECURE_SSL_REDIRECT": self.ssl_redirect,
            "SECURE_REDIRECT_EXEMPT": redirect_exempt,
            "SECURE_HSTS_SECONDS": self.hsts_seconds,
            # the header covers the console's host and names below it, never its parent domain
            "SECURE_HSTS_INCLUDE_SUBDOMAINS": True,
            "SECURE_HSTS_PRELOAD": self.hsts_preload,
            # the login throttle counts per client address: behind the proxy, the one it read (X-Forwarded-For,
            # which the proxy must set, not append to); else the peer's, whatever headers say
            "AXES_IPWARE_META_PRECEDENCE_ORDER": (
                ("HTTP_X_FORWARDED_FOR", "REMOTE_ADDR") if self.trust_proxy else ("REMOTE_ADDR",)
            ),
            "AXES_IPWARE_PROXY_COUNT": 0 if self.trust_proxy else None,
        }


def web_origin(value: str) -> str | None:
    """`value` as browsers send an origin (`https://console.example`: lower case, no default port), or None
    when it is not an http(s) origin (another scheme, a path, credentials, query, fragment, a bad port)."""
    try:
        parts = urlsplit(value)
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if (
        scheme not in DEFAULT_PORTS
        or not parts.hostname
        or parts.username is not None
        or parts.path
        or parts.query
        or parts.fragment
    ):
        return None
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    if port is not None and port != DEFAULT_PORTS[scheme]:
        host = f"{host}:{port}"
    return f"{scheme}://{host}"


def parse_public_url(name: str, value: str) -> str:
    """The console's origin from `value` (see web_origin); a trailing slash is allowed.

    No path (the console is served at the root), no credentials, query or fragment.
    """
    origin = web_origin(value.strip().rstrip("/"))
    if origin is None:
        raise ConfigError(f"{name}={value!r}: expected the console's origin, such as https://console.example")
    return origin


def parse_seconds(name: str, value: str) -> int:
    v = value.strip()
    if not v.isascii() or not v.isdigit():
        raise ConfigError(f"{name}={value!r}: expected a whole number of seconds (0 or more)")
    return int(v)


def load_public_site(env: Mapping[str, str]) -> PublicSite:
    """Read `A2ACONSOLE_PUBLIC_URL`, `_TRUST_PROXY`, `_SSL_REDIRECT`, `_HSTS_SECONDS`, `_HSTS_PRELOAD`."""

    def get(name: str) -> str | None:
        return env.get(name) or None  # empty counts as unset

    url = parse_public_url("A2ACONSOLE_PUBLIC_URL", v) if (v := get("A2ACONSOLE_PUBLIC_URL")) else None
    trust_proxy = parse_bool("A2ACONSOLE_TRUST_PROXY", v) if (v := get("A2ACONSOLE_TRUST_PROXY")) else False
    https = bool(url and url.startswith("https://"))
    ssl_redirect = https and trust_proxy
    if v := get("A2ACONSOLE_SSL_REDIRECT"):
        ssl_redirect = parse_bool("A2ACONSOLE_SSL_REDIRECT", v)
        if ssl_redirect and not (https and trust_proxy):
            raise ConfigError(
                f"A2ACONSOLE_SSL_REDIRECT={v!r}: expected false unless A2ACONSOLE_PUBLIC_URL is https and"
                " A2ACONSOLE_TRUST_PROXY=true (behind a TLS proxy without them every request looks like http and"
                " would be redirected forever)"
            )
    hsts_seconds = ONE_YEAR if https else 0
    if v := get("A2ACONSOLE_HSTS_SECONDS"):
        hsts_seconds = parse_seconds("A2ACONSOLE_HSTS_SECONDS", v)
    hsts_preload = parse_bool("A2ACONSOLE_HSTS_PRELOAD", v) if (v := get("A2ACONSOLE_HSTS_PRELOAD")) else False
    return PublicSite(url, trust_proxy, ssl_redirect, hsts_seconds, hsts_preload)
