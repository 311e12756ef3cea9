"""State behind one interface (`Store`): `memory://`, `sqlite:///…` (the default), `redis://…`.
`SharedFlight`: identical computations in flight, on any replica, share one call."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

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
from bot.store._api import shared_by_replicas as shared_by_replicas
from bot.store._flight import SharedFlight as SharedFlight
from bot.store._flight import abandonable as abandonable
from bot.store._memory import MemoryStore as MemoryStore
from bot.store._open import open_store as open_store
from bot.store._open import redis_store as redis_store
from bot.store._open import state_file as state_file
from bot.store._resilient import ResilientStore as ResilientStore
from bot.store._sqlite import SqliteStore as SqliteStore

if TYPE_CHECKING:
    from bot.store._redis import RedisStore as RedisStore


def __getattr__(name: str) -> Any:
    # the Redis client (redis-py, ~0.1-0.3 s to import) only for a run that uses Redis
    if name == "RedisStore":
        from bot.store._redis import RedisStore

        return RedisStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
