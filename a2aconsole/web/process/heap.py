"""The process's heap at start: what is loaded before serving is kept out of the garbage collector's full passes.

Django, the apps, the a2a-sdk and their modules are some 150,000 objects that live as long as the process. Python's
full collection walks every tracked object, so while a restore makes thousands of watches (each a few dozen new
objects) every full pass walked the start-up heap again: at 3,000 restored watches six passes of 0.15-0.3 s each,
every one a pause of the event loop that pages and calls waited out (`tests/bench/restore.py`). `gc.freeze` moves
them to a generation the collector skips; they are still freed by reference counting if they ever go.
"""

from __future__ import annotations

import gc


def keep_loaded() -> int:
    """Collect once, then keep everything alive now out of later full passes; how many objects that is."""
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()
