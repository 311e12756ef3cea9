"""The agent view's words: suggested prompts, status and loading messages."""

from __future__ import annotations

import pytest

from bot.render import (
    CLEARED_STATUS,
    PROMPTS_TITLE,
    assistant_status,
    loading_messages,
    suggested_prompts,
)
from bot.settings import Settings
from bot.slack.flows.routing import Router

KINDS = ["answer", "search", "pay", "doc"]


def test_there_are_at_most_four_prompts_each_a_title_and_a_message() -> None:
    """Slack shows at most four; each has a short title and the text it sends."""
    prompts = suggested_prompts()
    assert 1 <= len(prompts) <= 4
    for prompt in prompts:
        assert set(prompt) == {"title", "message"}
        assert 1 <= len(prompt["title"].strip()) <= 40
        assert 1 <= len(prompt["message"].strip()) <= 200
    assert len({p["title"] for p in prompts}) == len(prompts)
    assert PROMPTS_TITLE.strip()


def test_suggested_prompts_is_a_fresh_copy() -> None:
    """A caller changing the list it got does not change what the next caller gets."""
    first = suggested_prompts()
    prompts = suggested_prompts()
    prompts[0]["title"] = "changed"
    prompts.append({"title": "x", "message": "y"})
    assert first == suggested_prompts()


def test_each_prompt_goes_where_its_title_promises() -> None:
    """Sent as a DM, the Search prompt searches, the Pay prompt asks the Pay docs and the
    others get generated answers (the routing the bot applies to any DM)."""
    defaults = Settings.model_fields
    words = defaults["answer_min_words"].default
    pay = defaults["route_pay_questions"].default
    routes = {p["title"]: Router(words, pay).route(p["message"]).kind for p in suggested_prompts()}
    assert "search" == routes.pop("Search the docs")
    assert "pay" == routes.pop("Google Pay on a website")
    assert set(routes.values()) == {"answer"}


@pytest.mark.parametrize("kind", KINDS)
def test_status_and_loading_messages_fit_slacks_limits(kind: str) -> None:
    """A status reads after the app's name ("gdocs is …"); 1 to 10 loading messages."""
    status = assistant_status(kind)  # type: ignore[arg-type]
    assert status.startswith("is ")
    assert status.endswith("…")
    messages = loading_messages(kind)  # type: ignore[arg-type]
    assert 1 <= len(messages) <= 10
    assert all(m.strip() for m in messages)


def test_the_status_names_what_the_bot_is_doing() -> None:
    """Answers and searches search Google's docs, Pay searches its docs, doc fetches a page;
    the empty status clears it."""
    assert "is searching Google's docs…" == assistant_status("answer") == assistant_status()
    assert "Pay" in assistant_status("pay")
    assert "fetching" in assistant_status("doc")
    assert "" == CLEARED_STATUS
