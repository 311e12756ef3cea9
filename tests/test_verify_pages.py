"""The in-process LRU of cited pages' indexes: pages checked again reuse their index, and
what it keeps stays within its bounds whatever the pages' sizes."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bot.models import Document
from bot.verify import check_answer, forget_pages, kept_pages
from bot.verify._pages import MAX_INDEXED_CHARS, MAX_INDEXED_PAGES, page_index


@pytest.fixture(autouse=True)
def _empty_lru() -> Iterator[None]:
    forget_pages()
    yield
    forget_pages()


def _page(n: int, chars: int) -> Document:
    """A page of about `chars` characters with one shell command in it."""
    command = f"```sh\ngcloud storage buckets create gs://bucket-{n}\n```\n\n"
    filler = "Buckets hold objects. " * (max(0, chars - len(command)) // 22)
    return Document(
        name=f"documents/docs.cloud.google.com/page-{n}",
        uri=f"https://docs.cloud.google.com/page-{n}",
        title=f"Page {n}",
        content=command + filler,
    )


def test_a_page_checked_again_reuses_its_index() -> None:
    """The same page cited by the next answer is not indexed again."""
    page = _page(1, 5_000)
    assert page_index(page) is page_index(page)
    assert (1, len(page.content)) == kept_pages()


def test_the_indexes_kept_stay_within_the_character_bound() -> None:
    """Many big pages: the oldest go, the characters kept never pass the bound, and the
    latest pages are still reused."""
    size = MAX_INDEXED_CHARS // 5
    pages = [_page(n, size) for n in range(12)]
    for page in pages:
        page_index(page)
        assert kept_pages()[1] <= MAX_INDEXED_CHARS
    assert kept_pages()[0] < len(pages)
    latest, oldest = pages[-1], pages[0]
    assert page_index(latest) is page_index(latest)
    first = page_index(oldest)  # indexed afresh: it was pushed out
    assert first is page_index(oldest)
    assert kept_pages()[1] <= MAX_INDEXED_CHARS


def test_the_indexes_kept_stay_within_the_page_bound() -> None:
    """Many small pages: at most MAX_INDEXED_PAGES are kept."""
    for n in range(MAX_INDEXED_PAGES + 20):
        page_index(_page(n, 200))
    assert MAX_INDEXED_PAGES == kept_pages()[0]


def test_a_huge_page_is_checked_but_not_kept() -> None:
    """A page over a quarter of the bound is indexed for its check and not kept, so it does
    not push the other pages out; the check itself is the same."""
    small = _page(1, 5_000)
    page_index(small)
    huge = _page(2, MAX_INDEXED_CHARS // 3)
    answer = "Run:\n\n```sh\ngcloud storage buckets create gs://bucket-2\n```"
    result = check_answer(answer, [huge])
    assert ["found"] == [s.result for s in result.snippets]
    assert page_index(huge) is not page_index(huge)
    assert (1, len(small.content)) == kept_pages()
