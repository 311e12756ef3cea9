"""State behind one interface (`Store`): `memory://`, `sqlite:///…` (the default), `redis://…`.
`SharedFlight`: identical computations in flight, on any replica, share one call. STATE_URL
that cannot work is StoreConfigError (one line naming the fix); no answer, StoreUnavailable."""

from __future__ import annotations

import time
from collections.abc import Collection
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, unquote, urlsplit

from bot.redact import redact_url
from bot.store._api import JSON as JSON
from bot.store._api import TEXT as TEXT
from bot.store._api import AdapterCodec as AdapterCodec
from bot.store._api import Codec as Codec
from bot.store._api import ModelCodec as ModelCodec
from bot.store._api import Op as Op
from bot.store._api import Store as Store
from bot.store._api import StoreConfigError as StoreConfigError
from bot.store._api import StoreError as StoreError
from bot.store._api import StoreUnavailable as StoreUnavailable
from bot.store._flight import SharedFlight as SharedFlight
from bot.store._flight import abandonable as abandonable
from bot.store._memory import Clock
from bot.store._memory import MemoryStore as MemoryStore
from bot.store._resilient import ResilientStore as ResilientStore
from bot.store._resilient import on_primary as on_primary
from bot.store._sqlite import SqliteStore as SqliteStore

if TYPE_CHECKING:
    from bot.store._redis import RedisStore as RedisStore


def __getattr__(name: str) -> Any:
    # the Redis client (redis-py, ~0.1-0.3 s to import) only for a run that uses Redis
    if name == "RedisStore":
        from bot.store._redis import RedisStore

        return RedisStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_SQLITE_FORMS = "sqlite:///relative/path.db or sqlite:////absolute/path.db"
_FORMS = f"memory://, {_SQLITE_FORMS}, redis://[[user]:password@]host:port/db or rediss://…"


async def open_store(
    url: str,
    *,
    prefix: str,
    max_entries: int,
    clock: Clock = time.time,
    unevicted: Collection[str] = (),
) -> Store:
    """The store STATE_URL names, opened and checked. Memory and SQLite keep at most
    `max_entries` keys a namespace but for the `unevicted` ones (Redis: its maxmemory policy)."""
    scheme = url.partition("://")[0].lower() if "://" in url else ""
    if scheme == "memory":
        if url.rstrip("/").lower() != "memory:":
            raise _bad(url, "memory:// takes nothing after it")
        return MemoryStore(max_entries=max_entries, clock=clock, unevicted=unevicted)
    if scheme == "sqlite":
        return await SqliteStore.open(
            sqlite_path(url), max_entries=max_entries, clock=clock, unevicted=unevicted
        )
    if scheme in ("redis", "rediss"):
        store = redis_store(url, prefix=prefix)
        await store.verify(redact_url(url))
        return store
    raise _bad(url, f"unknown kind of store; use one of {_FORMS}")


def sqlite_path(url: str) -> Path:
    """`sqlite:///state.db` -> ./state.db; `sqlite:////data/x.db` -> /data/x.db."""
    head = "sqlite:///"
    if not url.lower().startswith(head) or len(url) == len(head):
        raise _bad(url, f"an SQLite URL is {_SQLITE_FORMS}")
    if "?" in url or "#" in url:
        raise _bad(url, "an SQLite URL takes no options")
    return Path(unquote(url[len(head) :]))


def state_file(url: str) -> Path | None:
    """The file an `sqlite:` STATE_URL keeps state in, or None for any other kind of store."""
    return sqlite_path(url) if url.partition("://")[0].lower() == "sqlite" else None


def redis_store(url: str, *, prefix: str) -> RedisStore:
    """A RedisStore for a redis:// or rediss:// URL (no connection made yet)."""
    try:
        parts = urlsplit(url)
        port = parts.port or 6379
    except ValueError as exc:
        raise _bad(url, f"{exc}") from None
    if not parts.hostname:
        raise _bad(url, "no host: redis://[[user]:password@]host:port/db")
    db = parts.path.strip("/") or "0"
    if not db.isdigit():
        raise _bad(url, "the database is a number: redis://host:port/0")
    tls = parts.scheme.lower() == "rediss"
    options = {name: values[-1] for name, values in parse_qs(parts.query).items()}
    unknown = sorted(set(options) - ({"ssl_ca_certs", "ssl_check_hostname"} if tls else set()))
    if unknown:
        why = "rediss:// takes ssl_ca_certs, ssl_check_hostname"
        raise _bad(url, f"unknown option {unknown[0]!r} ({why})")
    tls_options: dict[str, Any] = {
        "ssl_ca_certs": options.get("ssl_ca_certs"),
        "ssl_check_hostname": options.get("ssl_check_hostname", "true").lower() != "false",
    }
    from bot.store._redis import RedisStore

    return RedisStore(
        prefix=prefix,
        password=unquote(parts.password) if parts.password else None,
        tls=tls,
        host=parts.hostname,
        port=port,
        db=int(db),
        username=unquote(parts.username) if parts.username else None,
        **(tls_options if tls else {}),
    )


def _bad(url: str, why: str) -> StoreConfigError:
    return StoreConfigError(f"STATE_URL={redact_url(url)}: {why}")
