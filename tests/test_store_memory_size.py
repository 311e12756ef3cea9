"""memory:// and the per-process store of an outage are bounded by the bytes their values take
(encoded), not only by how many keys: pages of tens of KB cannot fill the process."""

from __future__ import annotations

import asyncio

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.models import Document
from bot.store import JSON, MemoryStore, ModelCodec, ResilientStore, redis_store
from tests.fakes.redis_server import RedisServer
from tests.store_backends import FakeClock

_DOC = ModelCodec(Document)
#: bytes per namespace the per-process store of an outage keeps
FALLBACK_MAX_CHARS = 2_000_000


def _page(i: int, chars: int) -> Document:
    return Document(name=f"documents/p{i}", uri=f"https://x/p{i}", content="x" * chars)


async def test_a_value_counts_as_the_bytes_its_codec_writes() -> None:
    """A page counts as its JSON; a counter as nothing."""
    store = MemoryStore()
    await store.set("doc:1", _page(1, 1000), _DOC, ttl=60)
    await store.incr("doc:n", 5, ttl=60)
    assert len(_DOC.encode(_page(1, 1000))) == store.chars("doc")


async def test_a_namespace_past_its_characters_drops_the_least_recently_used() -> None:
    """Five pages of about 385 bytes in 1,600: the one used longest ago goes, a read counts
    as use, and another namespace's values stay."""
    store = MemoryStore(max_entries=100, max_chars=1600, clock=FakeClock())
    await store.set("answer:keep", "a" * 300, JSON, ttl=60)
    for i in range(3):
        await store.set(f"doc:{i}", _page(i, 300), _DOC, ttl=60)
    assert await store.get("doc:0", _DOC) is not None  # doc:1 is now the least recent
    await store.set("doc:3", _page(3, 300), _DOC, ttl=60)
    await store.set("doc:4", _page(4, 300), _DOC, ttl=60)
    found = await store.get_many([f"doc:{i}" for i in range(5)], _DOC)
    assert [True, False, True, True, True] == [doc is not None for doc in found]
    assert store.chars("doc") <= 1600
    assert "a" * 300 == await store.get("answer:keep", JSON)


async def test_a_value_over_a_quarter_of_the_bound_is_not_kept() -> None:
    """One huge value does not push out every other one: it is not kept, the others stay."""
    store = MemoryStore(max_entries=100, max_chars=1000, clock=FakeClock())
    await store.set("doc:small", _page(0, 10), _DOC, ttl=60)
    await store.set("doc:big", _page(1, 5000), _DOC, ttl=60)
    assert await store.get("doc:big", _DOC) is None
    assert await store.get("doc:small", _DOC) is not None
    assert 1 == store.count("doc")


_WRITES = st.lists(
    st.tuples(
        st.sampled_from(["set", "add", "delete", "get"]), st.integers(0, 7), st.integers(0, 400)
    ),
    max_size=60,
)


@settings(max_examples=150, deadline=None)
@given(_WRITES)
def test_the_character_count_is_the_text_of_the_live_values(
    writes: list[tuple[str, int, int]],
) -> None:
    """After any writes, deletes, reads and expiries the namespace's count is the sum of its
    values' text, within the bound."""
    clock = FakeClock()
    store = MemoryStore(max_entries=5, max_chars=1000, clock=clock)

    async def run() -> None:
        for kind, key, chars in writes:
            clock.advance(1)
            name = f"doc:{key}"
            if kind == "set":
                await store.set(name, "x" * chars, JSON, ttl=30)
            elif kind == "add":
                await store.add(name, "y" * chars, JSON, ttl=5)
            elif kind == "delete":
                await store.delete(name)
            else:
                await store.get(name, JSON)
        found = await store.get_many([f"doc:{key}" for key in range(8)], JSON)
        live = [value for value in found if value is not None]
        assert store.chars("doc") == sum(len(value) + 2 for value in live)  # JSON's quotes
        assert len(live) <= 5
        assert store.chars("doc") <= 1000

    asyncio.run(run())


async def test_a_store_outage_keeps_at_most_its_characters_of_pages_in_the_process() -> None:
    """Redis stopped: 60 pages of 40,000 characters go to per-process state, which keeps the
    latest it has room for (49 of them), not all 60."""
    server = RedisServer().start()
    store = ResilientStore(
        redis_store(server.url, prefix="gdocs:"), timeout=0.15, retry_after=60, clock=FakeClock()
    )
    try:
        server.stop()
        for i in range(60):
            await store.set(f"doc:{i}", _page(i, 40_000), _DOC, ttl=600)
        kept = [doc for doc in await store.get_many([f"doc:{i}" for i in range(60)], _DOC) if doc]
        sizes = MemoryStore()  # counts their text as the fallback does
        for doc in kept:
            await sizes.set(f"doc:{doc.name}", doc, _DOC, ttl=60)
        assert sizes.chars("doc") <= FALLBACK_MAX_CHARS
        assert [f"documents/p{i}" for i in range(60 - len(kept), 60)] == [d.name for d in kept]
        assert len(kept) >= 45
    finally:
        await store.aclose()
        server.kill()
