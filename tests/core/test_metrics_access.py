"""Who may read /metrics: off by default, a bearer token compared whole, an address list; bad values name the
variable and never the token."""

from __future__ import annotations

import pytest

from a2aconsole.core.errors import ConfigError
from a2aconsole.core.metrics_access import MetricsAccess, load_metrics_access

TOKEN = "scrape-token-0123456789"


def test_off_by_default() -> None:
    access = load_metrics_access({})
    assert not access.enabled
    assert access.answer("127.0.0.1", f"Bearer {TOKEN}") == 404


@pytest.mark.parametrize(
    ("authorization", "status"),
    [
        (None, 401),
        ("", 401),
        (f"Basic {TOKEN}", 401),
        ("Bearer scrape-token-012345678", 401),  # a prefix
        (f"Bearer {TOKEN}x", 401),
        (f"Bearer {TOKEN}", 200),
        (f"bearer  {TOKEN} ", 200),
    ],
)
def test_token(authorization: str | None, status: int) -> None:
    access = load_metrics_access({"A2ACONSOLE_METRICS_TOKEN": TOKEN})
    assert access.answer("203.0.113.9", authorization) == status


@pytest.mark.parametrize(
    ("addr", "status"),
    [("10.1.2.3", 200), ("::ffff:10.1.2.3", 200), ("127.0.0.1", 200), ("192.168.1.1", 403), ("", 403), ("x", 403)],
)
def test_addresses(addr: str, status: int) -> None:
    access = load_metrics_access({"A2ACONSOLE_METRICS_ALLOW": "10.0.0.0/8, 127.0.0.1"})
    assert access.answer(addr, None) == status


def test_both_must_pass() -> None:
    access = load_metrics_access({"A2ACONSOLE_METRICS_ALLOW": "10.0.0.0/8", "A2ACONSOLE_METRICS_TOKEN": TOKEN})
    assert access.answer("192.168.1.1", f"Bearer {TOKEN}") == 403
    assert access.answer("10.0.0.1", None) == 401
    assert access.answer("10.0.0.1", f"Bearer {TOKEN}") == 200


def test_the_token_is_not_in_the_repr() -> None:
    assert TOKEN not in repr(MetricsAccess(token=TOKEN))


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({"A2ACONSOLE_METRICS_TOKEN": "short-secret"}, "A2ACONSOLE_METRICS_TOKEN"),
        ({"A2ACONSOLE_METRICS_TOKEN": "has a space in the middle"}, "A2ACONSOLE_METRICS_TOKEN"),
        ({"A2ACONSOLE_METRICS_ALLOW": "10.0.0.0/33"}, "A2ACONSOLE_METRICS_ALLOW='10.0.0.0/33'"),
        ({"A2ACONSOLE_METRICS_ALLOW": "prometheus.internal"}, "A2ACONSOLE_METRICS_ALLOW"),
        ({"A2ACONSOLE_METRICS_ALLOW": " , "}, "A2ACONSOLE_METRICS_ALLOW"),
    ],
)
def test_bad_values_name_the_variable_not_the_token(env: dict[str, str], named: str) -> None:
    with pytest.raises(ConfigError) as e:
        load_metrics_access(env)
    assert named in str(e.value)
    assert "short-secret" not in str(e.value) and "in the middle" not in str(e.value)
