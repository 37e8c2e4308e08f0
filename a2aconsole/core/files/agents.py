"""`agents.json`: the remote agents of a workspace, parsed and validated per entry.

The file is a JSON array of `{name, url, key?, description?, trustedOrigins?}`. It is read afresh on every
call; unknown fields of an entry are kept so a rewrite never drops what another tool wrote.

`trustedOrigins` lists the other origins (scheme, host and port) the owner confirmed the agent's card may send
the console's calls to: an interface anywhere else than the entry's own URL is not used (a card is the agent's
word, and could point the owner's messages at any address the console can reach).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

NAME_MAX_LENGTH = 40
NAME_PATTERN = re.compile(rf"^[a-z0-9-]{{1,{NAME_MAX_LENGTH}}}\Z")  # \Z: `$` would let a trailing newline through
_KNOWN = ("name", "url", "key", "description", "trustedOrigins")
MAX_TRUSTED_ORIGINS = 20


@dataclass
class AgentEntry:
    """One remote agent. The key never shows in `repr`."""

    name: str
    url: str
    key: str | None = field(default=None, repr=False)
    description: str | None = None
    trusted_origins: tuple[str, ...] = ()  # as `origin()` writes them
    extra: dict[str, Any] = field(default_factory=dict, repr=False)

    def __repr__(self) -> str:
        return f"AgentEntry(name={self.name!r}, url={self.masked_url!r}, key={'set' if self.key else 'unset'})"

    @property
    def card_url(self) -> str:
        """Where the public card lives: the URL itself when it ends in `.json`."""
        return self._well_known("agent-card.json") or self.url

    @property
    def legacy_card_url(self) -> str | None:
        """Where agents made before the card's 0.3 name (ADK's too) serve it, `/.well-known/agent.json`: looked at
        when `card_url` answers 404. None when the URL is the card's own (it ends in `.json`)."""
        return self._well_known("agent.json")

    def _well_known(self, name: str) -> str | None:
        p = urlsplit(self.url)
        if p.path.endswith(".json"):
            return None
        # the well-known path goes into the path: appended to the whole URL it would land in a query
        return urlunsplit(p._replace(path=p.path.rstrip("/") + "/.well-known/" + name, fragment=""))

    @property
    def masked_url(self) -> str:
        return mask_url(self.url)

    @property
    def origin(self) -> str:
        return origin(self.url)

    def may_call(self, url: str) -> bool:
        """True when calls may go to `url`: on the entry's own origin, or on one the owner confirmed."""
        o = origin(url)
        return o == self.origin or o in self.trusted_origins

    def key_missing(self, card: dict[str, Any]) -> str:
        """The key the card (as JSON) asks for while this entry has none, in words (`key_asked`); else ""."""
        return "" if self.key else key_asked(card)

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"name": self.name, "url": self.url}
        if self.key is not None:
            d["key"] = self.key
        if self.description is not None:
            d["description"] = self.description
        if self.trusted_origins:
            d["trustedOrigins"] = list(self.trusted_origins)
        d.update({k: v for k, v in self.extra.items() if k not in _KNOWN})
        return d

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> AgentEntry:
        return cls(
            name=d["name"],
            url=d["url"],
            key=d.get("key"),
            description=d.get("description"),
            trusted_origins=tuple(origin(o) for o in d.get("trustedOrigins") or ()),
            extra={k: v for k, v in d.items() if k not in _KNOWN},
        )


def mask_url(url: str) -> str:
    """A URL as scheme, host, port and path only: no user info, query or fragment (they may hold secrets)."""
    try:
        p = urlsplit(url)
        host = p.hostname or ""
        port = f":{p.port}" if p.port else ""
    except ValueError:
        return "(invalid URL)"
    if ":" in host:
        host = f"[{host}]"
    return f"{p.scheme}://{host}{port}{p.path}" if p.scheme else "(invalid URL)"


def key_asked(card: dict[str, Any]) -> str:
    """What key the card (as JSON) asks callers for, in words ("an API key", "a bearer token"), or "": a security
    scheme the console can answer (it sends the entry's key as X-API-Key, or as a bearer token to a bearer-only
    card). Other schemes (OAuth, OpenID, mutual TLS) are not keys an agents.json entry could hold."""
    schemes = card.get("securitySchemes")
    asked = set()
    for scheme in schemes.values() if isinstance(schemes, dict) else ():
        if not isinstance(scheme, dict):
            continue
        http = scheme.get("httpAuthSecurityScheme")
        if "apiKeySecurityScheme" in scheme:
            asked.add("an API key")
        elif isinstance(http, dict) and str(http.get("scheme", "")).lower() == "bearer":
            asked.add("a bearer token")
    return " or ".join(sorted(asked))


def origin(url: str) -> str:
    """A URL's origin as `scheme://host:port`, the port always written (a default one too), the host lowercased
    and an IPv6 one in brackets; "" for a URL that is not http(s) or has no host. Holds no path, user info or
    query, so it can be shown."""
    try:
        p = urlsplit(url)
        port = p.port or {"http": 80, "https": 443}.get(p.scheme)
    except ValueError:
        return ""
    host = (p.hostname or "").lower()
    if p.scheme not in ("http", "https") or not host:
        return ""
    return f"{p.scheme}://{f'[{host}]' if ':' in host else host}:{port}"


def is_origin(value: object) -> bool:
    """True for an http(s) URL that is an origin only: no user info, path (but "/"), query or fragment."""
    if not is_http_url(value):
        return False
    p = urlsplit(str(value))
    return not (p.username or p.password or p.path not in ("", "/") or p.query or p.fragment)


def is_http_url(url: object) -> bool:
    if not isinstance(url, str) or not url or any(c.isspace() for c in url):
        return False
    try:
        p = urlsplit(url)
        _ = p.port
    except ValueError:
        return False
    return p.scheme in ("http", "https") and bool(p.hostname)


def _label(index: int, entry: object) -> str:
    name = entry.get("name") if isinstance(entry, dict) else None
    return f"entry {index + 1}" + (f' ("{name}")' if isinstance(name, str) and name else "")


def validate_entries(data: object, filename: str = "agents.json") -> tuple[list[AgentEntry], list[str]]:
    """Valid entries, plus one message per problem naming the entry and the field."""
    if not isinstance(data, list):
        return [], [f"{filename}: expected a JSON array of agents, got {type(data).__name__}"]
    entries: list[AgentEntry] = []
    problems: list[str] = []
    seen: dict[str, int] = {}
    for i, raw in enumerate(data):
        where = f"{filename} {_label(i, raw)}"
        if not isinstance(raw, dict):
            problems.append(f"{where}: expected an object with name and url")
            continue
        errs: list[str] = []
        name = raw.get("name")
        if not isinstance(name, str) or not NAME_PATTERN.match(name):
            errs.append(f"{where}: name must be 1-40 characters of a-z, 0-9 and -")
        elif name in seen:
            errs.append(f"{where}: name is already used by entry {seen[name] + 1}")
        if not is_http_url(raw.get("url")):
            errs.append(f"{where}: url must be an absolute http(s) URL")
        for opt in ("key", "description"):
            if opt in raw and raw[opt] is not None and not isinstance(raw[opt], str):
                errs.append(f"{where}: {opt} must be a string")
        trusted = raw.get("trustedOrigins")
        if trusted is not None and not (
            isinstance(trusted, list) and len(trusted) <= MAX_TRUSTED_ORIGINS and all(map(is_origin, trusted))
        ):
            errs.append(
                f"{where}: trustedOrigins must be a list of at most {MAX_TRUSTED_ORIGINS} origins "
                "such as https://host:8443 (scheme, host and port only)"
            )
        if isinstance(name, str) and name not in seen:
            seen[name] = i
        if errs:
            problems.extend(errs)
        else:
            entries.append(AgentEntry.from_json(raw))
    return entries, problems


def parse_agents(text: str, filename: str = "agents.json") -> tuple[list[AgentEntry], list[str], str | None]:
    """(entries, problems, parse_error). A parse error means no agents at all."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        return [], [], f"{filename} is not valid JSON: {e.msg} at line {e.lineno} column {e.colno}"
    entries, problems = validate_entries(data, filename)
    return entries, problems, None


def dump_agents(entries: list[AgentEntry] | list[dict[str, Any]]) -> bytes:
    items = [e.to_json() if isinstance(e, AgentEntry) else e for e in entries]
    return (json.dumps(items, indent=2, ensure_ascii=False) + "\n").encode()
