"""`manage.py` whose watches poll on a short backoff, for the browser tests that wait for a polled watch's next
check (a task its agent forgot): `python -m tests.support.quick_poll_console serve --port 0`.

The console's own backoff (`follower.POLL_BACKOFF`: 15 s, 30 s, 1 min, ...) is checked on the fake clock
(tests/core/watches); a browser test against the real server would otherwise wait 15 s of real time for a check
whose outcome is what it is about. Only the intervals change: each check is the watch's own, as in production.
"""

from __future__ import annotations

import os
import sys

POLL_BACKOFF = (1.0, 2.0, 4.0)


def main(argv: list[str]) -> None:
    import django
    from django.core.management import execute_from_command_line

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "a2aconsole.settings")
    django.setup()
    from a2aconsole.core.watches import follower

    follower.POLL_BACKOFF = POLL_BACKOFF
    execute_from_command_line(["manage.py", *argv])


if __name__ == "__main__":
    main(sys.argv[1:])
