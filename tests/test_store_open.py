"""STATE_URL forms: what each opens, what each refuses (one line naming STATE_URL), and how a
URL is shown in logs (no password)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.redact import redact_url
from bot.store import TEXT, StoreConfigError, open_store
from bot.store._open import redis_store, sqlite_path


async def test_memory_url_opens_a_memory_store() -> None:
    """memory:// keeps state in the process."""
    store = await open_store("memory://", prefix="gdocs:", max_entries=10)
    assert "memory" == store.kind
    await store.set("answer:q", "a", TEXT, ttl=60)
    assert "a" == await store.get("answer:q", TEXT)


async def test_a_relative_sqlite_url_is_a_file_in_the_working_directory(tmp_path: Path) -> None:
    """sqlite:///data/state.db creates ./data/state.db (directories included)."""
    store = await open_store("sqlite:///data/state.db", prefix="gdocs:", max_entries=10)
    await store.set("answer:q", "a", TEXT, ttl=60)
    await store.aclose()
    assert (tmp_path / "data" / "state.db").is_file()


async def test_an_absolute_sqlite_url_has_four_slashes(tmp_path: Path) -> None:
    """sqlite:////abs/path.db is /abs/path.db."""
    target = tmp_path / "abs" / "state.db"
    store = await open_store(f"sqlite:///{target}", prefix="gdocs:", max_entries=10)
    await store.aclose()
    assert target.is_file()
    assert Path("/data/state.db") == sqlite_path("sqlite:////data/state.db")
    assert Path("state.db") == sqlite_path("sqlite:///state.db")


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("", "unknown kind of store"),
        ("postgres://db/x", "unknown kind of store"),
        ("memory://somewhere", "takes nothing"),
        ("sqlite://", "sqlite:///relative/path.db"),
        ("sqlite:///", "sqlite:///relative/path.db"),
        ("sqlite://host/state.db", "sqlite:///relative/path.db"),
        ("sqlite:///state.db?mode=ro", "no options"),
        ("redis://", "no host"),
        ("redis://:pw-in-bad-url@cache:port/0", "Port could not be cast"),
        ("redis://cache:6379/zero", "the database is a number"),
        ("redis://cache:6379/0?ssl_ca_certs=/x", "unknown option 'ssl_ca_certs'"),
        ("rediss://cache:6379/0?timeout=3", "unknown option 'timeout'"),
    ],
)
async def test_malformed_urls_are_refused_with_the_fix(url: str, why: str) -> None:
    """Each bad URL: StoreConfigError starting with STATE_URL, saying what is wrong."""
    with pytest.raises(StoreConfigError) as caught:
        await open_store(url, prefix="gdocs:", max_entries=10)
    message = str(caught.value)
    assert message.startswith("STATE_URL=")
    assert why in message
    assert "pw-in-bad-url" not in message


def test_rediss_urls_ask_for_tls() -> None:
    """rediss:// is TLS, redis:// is not; the CA option is accepted for rediss:// only."""
    assert redis_store("rediss://:pw@cache.internal:6378/1", prefix="gdocs:").tls is True
    assert redis_store("redis://cache.internal:6379/0", prefix="gdocs:").tls is False
    with_ca = redis_store("rediss://10.0.0.3:6378/0?ssl_ca_certs=/ca.pem", prefix="gdocs:")
    assert with_ca.tls is True


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("redis://:s3cret@cache:6379/0", "redis://:[redacted]@cache:6379/0"),
        ("redis://bot:s3cret@cache:6379/0", "redis://bot:[redacted]@cache:6379/0"),
        ("rediss://s3cret@cache:6379/0", "rediss://[redacted]@cache:6379/0"),
        ("redis://:p@ss:w@rd@cache:6379/0", "redis://:[redacted]@cache:6379/0"),
        ("redis://cache:6379/0", "redis://cache:6379/0"),
        ("redis://cache/0?password=s3cret", "redis://cache/0?password=[redacted]"),
        ("sqlite:////data/state.db", "sqlite:////data/state.db"),
        ("memory://", "memory://"),
        ("user:s3cret@cache", "[redacted]@cache"),
    ],
)
def test_urls_are_shown_without_their_password(url: str, shown: str) -> None:
    """redact_url replaces the password (or a lone user part, which may be one) by [redacted]."""
    assert shown == redact_url(url)
