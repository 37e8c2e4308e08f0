"""URLs masked in log lines: user info and query strings may hold keys, a Bot API path holds the bot's token.

`MaskUrls` is a logging filter; `settings.LOGGING` attaches it to every handler, so a record of any logger
(httpx and httpcore log every request URL, a2a-sdk's card resolver the card URL) is masked before it is
written. Nothing here installs itself on import: a process that does not configure logging from the
settings gets no masking from this module, and a test can see that it is the configuration that masks.
"""

from __future__ import annotations

import logging
import re

from a2aconsole.core.files import mask_url

_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>]+")
_BOT_TOKEN = re.compile(r"/bot[^/\s]+/")


def mask_urls(text: str) -> str:
    """`text` with every URL cut to scheme, host, port and path (user info and query may hold keys)."""
    return _BOT_TOKEN.sub("/bot***/", _URL.sub(lambda m: mask_url(m.group(0)), text))


class MaskUrls(logging.Filter):
    """Masks the URLs in a record's message (the formatted one: a URL may come in through `args`)."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a record that cannot format is left to the handler
            return True
        if "://" in message:
            record.msg, record.args = mask_urls(message), None
        return True
