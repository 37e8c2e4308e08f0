"""Client settings read from the environment under the spec's names (`A2AClient__…`)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from a2aconsole.core.errors import ConfigError

_TIMESPAN = re.compile(r"^(?:(\d+)\.)?(\d{1,2}):(\d{1,2}):(\d{1,2})(?:\.(\d{1,7}))?$")
_TRUE = {"true", "1", "yes", "on"}
_FALSE = {"false", "0", "no", "off"}
RESPONSE_MARGIN = 1024 * 1024


@dataclass(frozen=True)
class ClientSettings:
    """The `A2AClient` section. Defaults are the spec's, except `enabled` (on for the console)."""

    enabled: bool = True
    wait_seconds: float = 60.0
    watch_timeout: float = 86400.0
    card_timeout_seconds: float = 10.0
    max_file_bytes: int = 10 * 1024 * 1024
    push_base_url: str | None = None
    call_timeout: float = 60.0
    max_response_bytes: int | None = None  # None: derived from max_file_bytes (`response_limit`)

    @property
    def response_limit(self) -> int:
        """The most bytes read from an agent for one answer (or one event of a stream): set, or room for one
        file part at `max_file_bytes` in base64 (4/3) plus a margin for the rest of the task."""
        return self.max_response_bytes or self.max_file_bytes * 4 // 3 + RESPONSE_MARGIN


def parse_bool(name: str, value: str) -> bool:
    v = value.strip().lower()
    if v in _TRUE:
        return True
    if v in _FALSE:
        return False
    raise ConfigError(f"{name}={value!r}: expected true or false")


def parse_positive_number(name: str, value: str, *, integer: bool = False) -> float:
    try:
        n = int(value.strip()) if integer else float(value.strip())
    except ValueError:
        kind = "a whole number" if integer else "a number"
        raise ConfigError(f"{name}={value!r}: expected {kind} greater than 0") from None
    if not n > 0 or n != n or n == float("inf"):
        raise ConfigError(f"{name}={value!r}: expected a number greater than 0")
    return n


def parse_timespan(name: str, value: str) -> float:
    """A .NET TimeSpan (`[d.]hh:mm:ss[.fffffff]`, e.g. `1.00:00:00`) or plain seconds, as seconds."""
    v = value.strip()
    m = _TIMESPAN.match(v)
    if m:
        days, hours, minutes, seconds, fraction = m.groups()
        if int(hours) < 24 and int(minutes) < 60 and int(seconds) < 60:
            total = int(days or 0) * 86400 + int(hours) * 3600 + int(minutes) * 60 + int(seconds)
            total += float(f"0.{fraction}") if fraction else 0.0
            if total > 0:
                return total
    else:
        try:
            total = float(v)
        except ValueError:
            total = -1.0
        if total > 0 and total != float("inf"):
            return total
    raise ConfigError(f"{name}={value!r}: expected a duration like 1.00:00:00 (d.hh:mm:ss) or seconds > 0")


def parse_base_url(name: str, value: str) -> str:
    v = value.strip().rstrip("/")
    parts = urlsplit(v)
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment:
        raise ConfigError(f"{name}={value!r}: expected an absolute http(s) URL such as https://console.example")
    return v


def load_client_settings(env: Mapping[str, str]) -> ClientSettings:
    """Read the `A2AClient__…` variables; a bad value raises ConfigError naming the variable."""
    s = ClientSettings()
    fields: dict[str, object] = {}
    if (v := env.get("A2AClient__Enabled")) not in (None, ""):
        fields["enabled"] = parse_bool("A2AClient__Enabled", v)
    if (v := env.get("A2AClient__WaitSeconds")) not in (None, ""):
        fields["wait_seconds"] = parse_positive_number("A2AClient__WaitSeconds", v)
    if (v := env.get("A2AClient__WatchTimeout")) not in (None, ""):
        fields["watch_timeout"] = parse_timespan("A2AClient__WatchTimeout", v)
    if (v := env.get("A2AClient__CardTimeoutSeconds")) not in (None, ""):
        fields["card_timeout_seconds"] = parse_positive_number("A2AClient__CardTimeoutSeconds", v)
    if (v := env.get("A2AClient__MaxFileBytes")) not in (None, ""):
        fields["max_file_bytes"] = int(parse_positive_number("A2AClient__MaxFileBytes", v, integer=True))
    if (v := env.get("A2AClient__MaxResponseBytes")) not in (None, ""):
        fields["max_response_bytes"] = int(parse_positive_number("A2AClient__MaxResponseBytes", v, integer=True))
    for name in ("A2AClient__PushBaseUrl", "A2A__PublicUrl"):
        if (v := env.get(name)) not in (None, ""):
            fields["push_base_url"] = parse_base_url(name, v)
            break
    return ClientSettings(**{**s.__dict__, **fields})
