"""A throwaway PostgreSQL database on the machine's server (127.0.0.1:5432, trust auth), dropped afterwards."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import psycopg

ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"


@contextlib.contextmanager
def fresh_database(name: str) -> Iterator[str]:
    """A new empty database `name` (one left by an earlier run is dropped first): its `postgres://` URL."""
    with psycopg.connect(ADMIN, autocommit=True) as c:
        c.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        c.execute(f'CREATE DATABASE "{name}"')
    try:
        yield f"postgres://postgres@127.0.0.1:5432/{name}"
    finally:
        with psycopg.connect(ADMIN, autocommit=True) as c:
            c.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
