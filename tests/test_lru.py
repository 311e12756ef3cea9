"""SizedLru: the process's page and recent-question caches stay within their entries and
their size, and keep the values used last."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from bot.lru import SizedLru


def _lru(max_entries: int = 3, max_size: int = 100) -> SizedLru[str, str]:
    return SizedLru(max_entries=max_entries, max_size=max_size, size_of=len)


def test_the_least_recently_used_goes_first() -> None:
    """Past its entries, the value used longest ago is dropped; a read counts as a use."""
    lru = _lru()
    for key in ("a", "b", "c"):
        lru.put(key, key)
    assert "a" == lru.get("a")
    lru.put("d", "d")
    assert (None, "a", 3) == (lru.get("b"), lru.get("a"), len(lru))


def test_a_read_without_refresh_leaves_the_order_as_it_was() -> None:
    """`refresh=False`: the value still goes in the order it was kept."""
    lru = _lru()
    for key in ("a", "b", "c"):
        lru.put(key, key)
    assert "a" == lru.get("a", refresh=False)
    lru.put("d", "d")
    assert (None, "b") == (lru.get("a"), lru.get("b"))


def test_past_its_size_the_oldest_values_go() -> None:
    """Values of 20 within a size of 100: the fifth pushes out the first."""
    lru = _lru(max_entries=10)
    for key in "abcde":
        lru.put(key, key * 20)
    assert 100 == lru.size
    lru.put("f", "f" * 20)
    assert (None, 100, 5) == (lru.get("a"), lru.size, len(lru))


def test_a_value_over_a_quarter_of_the_size_is_not_kept() -> None:
    """A huge value is not kept, pushes nothing out, and drops the older value under its key."""
    lru = _lru()
    lru.put("a", "small")
    lru.put("b", "x" * 10)
    lru.put("b", "y" * 26)
    assert (None, "small", 5) == (lru.get("b"), lru.get("a"), lru.size)


def test_replacing_a_value_counts_its_size_once() -> None:
    """The same key written again: its old size is taken off."""
    lru = _lru()
    lru.put("a", "x" * 10)
    lru.put("a", "y" * 5)
    assert (1, 5, "yyyyy") == (len(lru), lru.size, lru.get("a"))


def test_a_discarded_value_is_gone_with_its_size() -> None:
    """`discard`: the key keeps nothing, its size is taken off, the others stay."""
    lru = _lru()
    lru.put("a", "x" * 10)
    lru.put("b", "y" * 5)
    lru.discard("a")
    lru.discard("never kept")
    assert (None, "yyyyy", 1, 5) == (lru.get("a"), lru.get("b"), len(lru), lru.size)


_SIZE_OR_DISCARD = st.none() | st.integers(0, 40)


@given(st.lists(st.tuples(st.sampled_from("abcdefgh"), _SIZE_OR_DISCARD), max_size=60))
def test_the_bounds_hold_whatever_is_put(puts: list[tuple[str, int | None]]) -> None:
    """Any sequence of writes and discards (None): never more than the entries or the size,
    and the size is the sum of what is kept."""
    lru = _lru(max_entries=4, max_size=60)
    for key, size in puts:
        if size is None:
            lru.discard(key)
        else:
            lru.put(key, key * size)
        kept = [lru.get(k, refresh=False) for k in "abcdefgh"]
        held = [v for v in kept if v is not None]
        assert len(lru) == len(held) <= 4
        assert lru.size == sum(map(len, held)) <= 60
