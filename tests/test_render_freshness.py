"""What a REST answer tells about its pages (issue 41, items 3 and 4): when each page last
changed, whether Show full doc will bring a file, and which products the answer is limited
to — said once, and nothing of it on an MCP answer."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from bot.models import Answer, Reference, SearchHit
from bot.render import (
    answer_markdown,
    answer_parts,
    render_answer,
    streamed_answer,
    updated_words,
)
from tests.test_render_support import assert_valid_message

HOST = "https://firebase.google.com"
FIREBASE = ("firebase.google.com",)


def _ref(i: int, *, updated: datetime | None = None, size: int | None = None) -> Reference:
    return Reference(
        name=f"documents/firebase.google.com/docs/p{i}",
        uri=f"{HOST}/docs/p{i}",
        title=f"Page {i}",
        updated=updated,
        size=size,
    )


def _answer(*refs: Reference, scope: tuple[str, ...] = ()) -> Answer:
    return Answer(query="q", kind="answer", text="Words.", references=refs, scope=scope)


@pytest.mark.parametrize(
    ("when", "said"),
    [
        (datetime(2026, 10, 12, 9, 30, tzinfo=UTC), "updated 12 Oct 2026"),
        (
            datetime(2026, 10, 12, 23, 30, tzinfo=timezone(timedelta(hours=-8))),
            "updated 13 Oct 2026",
        ),
        (datetime(2026, 1, 1, 0, 30, tzinfo=timezone(timedelta(hours=9))), "updated 31 Dec 2025"),
        (None, None),
    ],
)
def test_a_pages_date_is_its_utc_day(when: datetime | None, said: str | None) -> None:
    assert said == updated_words(when)


def test_each_source_says_when_it_last_changed_once_after_its_title() -> None:
    day = datetime(2026, 10, 12, tzinfo=UTC)
    answer = _answer(_ref(1, updated=day), _ref(2))
    message = render_answer(answer)
    assert_valid_message(message)
    sources = message["blocks"][-2]["text"]["text"]
    assert sources == (
        f"*Sources*\n1. <{HOST}/docs/p1|Page 1> — updated 12 Oct 2026\n2. <{HOST}/docs/p2|Page 2>"
    )
    assert 1 == str(message).count("updated")
    streamed = streamed_answer(answer, answer_parts(answer))
    assert 1 == str(streamed.end).count("updated 12 Oct 2026")
    printed = answer_markdown(answer)
    assert f"1. [Page 1]({HOST}/docs/p1) — updated 12 Oct 2026\n2. [Page 2]" in printed


def test_search_results_say_when_each_page_last_changed() -> None:
    hit = SearchHit(
        title="Auth",
        uri=f"{HOST}/docs/auth",
        snippet="Sign in.",
        name="documents/firebase.google.com/docs/auth",
        updated=datetime(2026, 3, 5, tzinfo=UTC),
    )
    for kind in ("search", "pay"):
        message = render_answer(Answer(query="q", kind=kind, hits=(hit,)))  # type: ignore[arg-type]
        head = message["blocks"][0]["text"]["text"].split("\n")[0]
        assert head == f"*1. <{HOST}/docs/auth|Auth>* — updated 5 Mar 2026"
    printed = answer_markdown(Answer(query="q", kind="search", hits=(hit,)))
    assert printed.startswith("1. **Auth** — updated 5 Mar 2026\n")


def _controls(answer: Answer, **asked: int) -> list[tuple[str, str]]:
    """(shown text, screen-reader label) of each Show full doc button and menu option."""
    [block] = [b for b in render_answer(answer, **asked)["blocks"] if b["type"] == "actions"]  # type: ignore[misc]
    shown = []
    for element in block["elements"]:
        for item in [element, *element.get("options", [])]:
            if "text" in item:
                shown.append((item["text"]["text"], item.get("accessibility_label", "")))
    return shown


def test_show_full_doc_says_when_a_page_will_come_as_a_file() -> None:
    """Bigger than the file threshold (20,000 characters unless set): "(file, 48 KB)" on
    the button and its label; a small or unknown size says nothing."""
    answer = _answer(_ref(1, size=48_200), _ref(2, size=19_000), _ref(3))
    assert _controls(answer) == [
        ("Show full doc 1 (file, 48 KB)", "Show full doc 1 (file, 48 KB): Page 1"),
        ("Show full doc 2", "Show full doc 2: Page 2"),
        ("Show full doc 3", "Show full doc 3: Page 3"),
    ]
    assert _controls(answer, file_chars=50_000)[0][0] == "Show full doc 1"
    big = _answer(_ref(1, size=2_400_000))
    assert _controls(big)[0][0] == "Show full doc 1 (file, 2.4 MB)"


def test_a_menu_option_says_file_too_and_labels_stay_within_75_characters() -> None:
    long_title = "A very long page title " * 6
    refs = [_ref(i, size=900_000) for i in range(1, 9)]
    refs[0] = refs[0].model_copy(update={"title": long_title})
    controls = _controls(_answer(*refs))
    assert len(controls) == 8
    assert all(text.endswith("(file, 900 KB)") for text, _ in controls)
    assert all(len(text) <= 75 and len(label) <= 75 for text, label in controls)


def test_the_answer_says_its_products_and_how_to_change_the_channels() -> None:
    channel = render_answer(_answer(_ref(1), scope=FIREBASE), channel_scope=FIREBASE)
    asked = render_answer(_answer(_ref(1), scope=FIREBASE))
    assert channel["blocks"][0]["elements"][0]["text"] == (
        "Firebase docs only · change with `/gdocs channel products`"
    )
    assert asked["blocks"][0]["elements"][0]["text"] == "Firebase docs only"
    answer = _answer(_ref(1), scope=FIREBASE)
    streamed = streamed_answer(answer, answer_parts(answer, channel_scope=FIREBASE))
    assert "Firebase docs only" in str(streamed.chunks[0])
    assert answer_markdown(answer).startswith("> Firebase docs only\n\n")


def test_an_mcp_answer_says_nothing_of_dates_sizes_or_products() -> None:
    answer = _answer(_ref(1), _ref(2))
    message = render_answer(answer)
    assert message["blocks"][0]["type"] == "section"
    assert "updated" not in str(message)
    assert "(file" not in str(message)
    assert "docs only" not in str(message)
    assert "updated" not in answer_markdown(answer)
