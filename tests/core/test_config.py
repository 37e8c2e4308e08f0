"""The `A2AClient__…` variables: every one parsed, defaults kept, and a bad value named with what is expected."""

from __future__ import annotations

import pytest

from a2aconsole.core.config import ClientSettings, load_client_settings
from a2aconsole.core.errors import ConfigError


def test_defaults_when_nothing_is_set() -> None:
    s = load_client_settings({})
    assert s == ClientSettings()
    assert (s.enabled, s.wait_seconds, s.watch_timeout, s.card_timeout_seconds) == (True, 60.0, 86400.0, 10.0)
    assert (s.max_file_bytes, s.push_base_url, s.call_timeout) == (10485760, None, 60.0)
    assert s.response_limit == 10485760 * 4 // 3 + 1024 * 1024  # one file part in base64, plus room


def test_response_limit_follows_max_file_bytes_unless_set() -> None:
    assert load_client_settings({"A2AClient__MaxFileBytes": "3000"}).response_limit == 4000 + 1024 * 1024
    both = {"A2AClient__MaxFileBytes": "3000", "A2AClient__MaxResponseBytes": "65536"}
    assert load_client_settings(both).response_limit == 65536


def test_empty_values_mean_default() -> None:
    names = [
        "Enabled",
        "WaitSeconds",
        "WatchTimeout",
        "CardTimeoutSeconds",
        "MaxFileBytes",
        "MaxResponseBytes",
        "PushBaseUrl",
    ]
    assert load_client_settings({f"A2AClient__{n}": "" for n in names}) == ClientSettings()


def test_every_variable_is_read() -> None:
    s = load_client_settings(
        {
            "A2AClient__Enabled": "False",
            "A2AClient__WaitSeconds": "2.5",
            "A2AClient__WatchTimeout": "02:30:00",
            "A2AClient__CardTimeoutSeconds": "3",
            "A2AClient__MaxFileBytes": "2048",
            "A2AClient__PushBaseUrl": "https://console.example/base/",
        }
    )
    assert s.enabled is False
    assert s.wait_seconds == 2.5
    assert s.watch_timeout == 9000.0
    assert s.card_timeout_seconds == 3.0
    assert s.max_file_bytes == 2048 and isinstance(s.max_file_bytes, int)
    assert s.push_base_url == "https://console.example/base"


@pytest.mark.parametrize(
    ("raw", "expected"), [("true", True), ("1", True), ("On", True), ("yes", True), ("0", False), ("off", False)]
)
def test_enabled_spellings(raw: str, expected: bool) -> None:
    assert load_client_settings({"A2AClient__Enabled": raw}).enabled is expected


@pytest.mark.parametrize(
    ("raw", "seconds"),
    [
        ("1.00:00:00", 86400.0),
        ("00:00:30", 30.0),
        ("2.03:04:05", 2 * 86400 + 3 * 3600 + 4 * 60 + 5),
        ("00:00:01.5", 1.5),
        ("90", 90.0),
        ("0.5", 0.5),
    ],
)
def test_watch_timeout_accepts_timespan_and_seconds(raw: str, seconds: float) -> None:
    assert load_client_settings({"A2AClient__WatchTimeout": raw}).watch_timeout == seconds


def test_public_url_is_the_fallback_for_push_base_url() -> None:
    assert load_client_settings({"A2A__PublicUrl": "http://h:8000"}).push_base_url == "http://h:8000"
    both = {"A2AClient__PushBaseUrl": "https://a.example", "A2A__PublicUrl": "https://b.example"}
    assert load_client_settings(both).push_base_url == "https://a.example"


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("A2AClient__Enabled", "maybe", "expected true or false"),
        ("A2AClient__WaitSeconds", "soon", "expected a number greater than 0"),
        ("A2AClient__WaitSeconds", "-1", "expected a number greater than 0"),
        ("A2AClient__WaitSeconds", "nan", "expected a number greater than 0"),
        ("A2AClient__WatchTimeout", "1 day", "expected a duration like 1.00:00:00"),
        ("A2AClient__WatchTimeout", "1.25:00:00", "expected a duration like 1.00:00:00"),
        ("A2AClient__WatchTimeout", "00:00:00", "expected a duration like 1.00:00:00"),
        ("A2AClient__CardTimeoutSeconds", "0", "expected a number greater than 0"),
        ("A2AClient__MaxFileBytes", "1.5", "expected a whole number greater than 0"),
        ("A2AClient__MaxFileBytes", "10MB", "expected a whole number greater than 0"),
        ("A2AClient__MaxResponseBytes", "0", "greater than 0"),
        ("A2AClient__PushBaseUrl", "console.example", "expected an absolute http(s) URL"),
        ("A2AClient__PushBaseUrl", "https://c.example/?q=1", "expected an absolute http(s) URL"),
        ("A2A__PublicUrl", "ftp://c.example", "expected an absolute http(s) URL"),
    ],
)
def test_bad_value_names_the_variable_and_what_is_expected(name: str, value: str, expected: str) -> None:
    with pytest.raises(ConfigError) as e:
        load_client_settings({name: value})
    message = str(e.value)
    assert message.startswith(f"{name}={value!r}: ")
    assert expected in message
    assert "\n" not in message
