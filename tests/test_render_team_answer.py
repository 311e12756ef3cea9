"""How a team answer reads (bot/render/_team_answer.py, through `answer_parts`): the head says
once whose it is, the team's Markdown is escaped like any answer, its Google pages are its
Sources, and "Ask Google's docs too" carries the question as typed."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.models import Answer, Reference, TeamMark
from bot.render import (
    ACTION_ASK_GOOGLE,
    ACTION_TRY_AGAIN,
    answer_parts,
    decode_try_again,
    render_answer,
    streamed_answer,
    team_line,
    team_references,
    team_words,
)

SAVED = datetime(2026, 12, 3, 15, 30, tzinfo=UTC)
BUCKETS_URL = "https://docs.cloud.google.com/storage/docs/creating-buckets"
BUCKETS = "documents/docs.cloud.google.com/storage/docs/creating-buckets"
QUESTION = "how do I create a bucket?"


def mark(**fields: object) -> TeamMark:
    values: dict[str, object] = {"id": "t1", "author": "U0ANA", "saved_at": SAVED}
    return TeamMark.model_validate(values | fields)


def team_answer(text: str, **fields: object) -> Answer:
    return Answer(
        query=QUESTION,
        kind="answer",
        text=text,
        tool="team_answer",
        team=mark(**fields),
        references=team_references(text),
    )


def buttons(blocks: list[dict[str, object]]) -> dict[str, dict[str, object]]:
    found = {}
    for block in blocks:
        if block["type"] == "actions":
            for element in block["elements"]:  # type: ignore[attr-defined]
                found[element["action_id"]] = element
    return found


@pytest.mark.parametrize(
    ("fields", "line"),
    [
        (
            {"channel": "C0INFRA", "channel_name": "infra"},
            "Team answer · saved by <@U0ANA> on 3 Dec 2026 · from <#C0INFRA>",
        ),
        ({}, "Team answer · saved by <@U0ANA> on 3 Dec 2026"),
        ({"channel_name": "infra"}, "Team answer · saved by <@U0ANA> on 3 Dec 2026 · from #infra"),
        (
            {"author": "<!here> ana", "channel": "not an id", "channel_name": "<!channel>"},
            "Team answer · saved by &lt;!here&gt; ana on 3 Dec 2026 · from #&lt;!channel&gt;",
        ),
        ({"review_due": True}, "Team answer · saved by <@U0ANA> on 3 Dec 2026"),
    ],
)
def test_the_team_line_says_who_when_and_where_and_never_pings(
    fields: dict[str, object], line: str
) -> None:
    """No channel part without a channel; a name that is not an id is words; "review due"
    is for Home, not for the asker."""
    assert line == team_line(mark(**fields))


@pytest.mark.parametrize(
    ("fields", "words"),
    [
        (
            {"channel": "C0INFRA", "channel_name": "infra"},
            "Team answer · saved by U0ANA on 3 Dec 2026 · from #infra",
        ),
        ({}, "Team answer · saved by U0ANA on 3 Dec 2026"),
    ],
)
def test_the_terminal_says_the_same_line_without_slack_markup(
    fields: dict[str, object], words: str
) -> None:
    assert words == team_words(mark(**fields))


@pytest.mark.parametrize(
    ("markdown", "names"),
    [
        (f"See [Create buckets]({BUCKETS_URL}).", [BUCKETS]),
        (f"See {BUCKETS_URL}, then [again]({BUCKETS_URL}#top).", [BUCKETS]),
        ("See [ours](https://wiki.example.com/buckets) or https://evil.example/x.", []),
        (
            "https://firebase.google.com/docs/firestore/pricing and " + BUCKETS_URL,
            [
                "documents/firebase.google.com/docs/firestore/pricing",
                BUCKETS,
            ],
        ),
        ("<https://docs.cloud.google.com/x|google.com>", []),
    ],
)
def test_a_team_answers_sources_are_the_google_pages_it_links_to(
    markdown: str, names: list[str]
) -> None:
    """Each once, in order; other hosts stay links in the text, not sources; a Slack link
    typed into the text is text."""
    assert names == [ref.name for ref in team_references(markdown)]


def test_a_team_answer_says_whose_it_is_once_with_sources_and_ask_google_too() -> None:
    answer = team_answer(f"Use Terraform. See [Create buckets]({BUCKETS_URL}).", channel="C0INFRA")
    parts = answer_parts(
        answer, asker="U0BOB", question=QUESTION, feedback_id="a1", ask_google=QUESTION
    )
    shown = json.dumps(parts.head + parts.body + parts.tail, ensure_ascii=False)
    found = buttons(parts.tail)

    assert 1 == shown.count("Team answer · saved by <@U0ANA> on 3 Dec 2026 · from <#C0INFRA>")
    assert "*Sources*" in shown
    assert "Create buckets" in shown
    assert "Ask Google's docs too" == found[ACTION_ASK_GOOGLE]["text"]["text"]  # type: ignore[index]
    assert QUESTION == decode_try_again(found[ACTION_ASK_GOOGLE]["value"])
    assert "context_actions" == parts.tail[-1]["type"]


def test_an_answer_from_google_shows_no_team_line_nor_ask_google_too() -> None:
    """Without a team answer nothing changes, even when the caller passes the question."""
    answer = Answer(
        query=QUESTION,
        kind="answer",
        text="Run it.",
        references=(Reference(name=BUCKETS, uri=BUCKETS_URL, title="Create buckets"),),
    )
    shown = json.dumps(render_answer(answer, ask_google=QUESTION))
    assert "Team answer" not in shown
    assert ACTION_ASK_GOOGLE not in shown
    assert render_answer(answer) == render_answer(answer, ask_google=QUESTION)


def test_the_streams_final_message_says_it_too() -> None:
    answer = team_answer("We deploy with **Terraform**.", channel="C0INFRA")
    parts = answer_parts(answer, feedback_id="a1", ask_google=QUESTION)
    streamed = streamed_answer(answer, parts)
    head = json.dumps([c for c in streamed.chunks if c["type"] == "blocks"])
    assert 1 == head.count("Team answer")
    assert ACTION_ASK_GOOGLE in json.dumps(streamed.end)
    assert ACTION_TRY_AGAIN not in json.dumps(streamed.end)


HOSTILE = st.sampled_from(
    ["<!channel>", "<!here>", "<@U0ALL>", "<https://evil.example|google.com>",
     "[google.com](https://evil.example/x)", "&lt;", "words", "\n\n", "`code`", "<#C0X>"]
)  # fmt: skip


@given(st.lists(HOSTILE, min_size=1, max_size=12).map(" ".join))
def test_team_text_never_pings_nor_links_under_another_hosts_name(text: str) -> None:
    """Whatever the team wrote, the message holds no broadcast, no mention, no channel link
    and no link to evil.example named as another host; the stream's text neither."""
    answer = team_answer(text)
    parts = answer_parts(answer, feedback_id="a1", ask_google=QUESTION)
    shown = json.dumps([*parts.body, streamed_answer(answer, parts).markdown])
    for forbidden in ("<!channel>", "<!here>", "<@U0ALL>", "<#C0X>", "|google.com>"):
        assert forbidden not in shown
    assert "[google.com](https://evil.example" not in shown
