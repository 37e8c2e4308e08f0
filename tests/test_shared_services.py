"""The tests that share Redis and PostgreSQL run on one xdist worker: each is named by a file that exists, and the
scheduler puts them in one group (the rest one test at a time)."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import SHARED_SERVICES, SharedServicesScheduling

ROOT = Path(__file__).resolve().parents[1]


def test_every_shared_services_file_exists() -> None:
    assert all((ROOT / p).is_file() for p in SHARED_SERVICES)


def test_the_shared_services_tests_are_one_group_and_the_others_one_each() -> None:
    sched = object.__new__(SharedServicesScheduling)  # its grouping alone (a whole one needs xdist's workers)
    shared = [f"{p}::test_{i}" for i, p in enumerate(sorted(SHARED_SERVICES))]
    assert {sched._split_scope(n) for n in shared} == {"shared-services"}
    other = ["tests/core/test_tasks.py::test_a", "tests/core/test_tasks.py::test_b[js]"]
    assert [sched._split_scope(n) for n in other] == other
