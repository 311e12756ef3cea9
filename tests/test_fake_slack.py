"""The recording fake Slack refuses what Slack refuses, so a bot bug fails a test: checked
through slack_sdk's real AsyncWebClient over loopback, as the bot calls it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.render import (
    HomeInput,
    Vote,
    feedback_comment_modal,
    loading_messages,
    render_home,
    render_unfurl,
    suggested_prompts,
)
from tests.fakes.slack_api import FakeSlack
from tests.test_render_support import feedback_block_for

URL = "https://docs.cloud.google.com/storage/docs/creating-buckets"
NAME = "documents/docs.cloud.google.com/storage/docs/creating-buckets"


@pytest.fixture
def fake() -> Iterator[FakeSlack]:
    slack = FakeSlack().start()
    yield slack
    slack.stop()


@pytest.fixture
async def client(fake: FakeSlack) -> AsyncIterator[AsyncWebClient]:
    web = AsyncWebClient(token="xoxb-test", base_url=fake.url)
    yield web
    if web.session is not None:
        await web.session.close()


def _home_view() -> dict[str, Any]:
    now = datetime(2026, 11, 3, 12, 0, tzinfo=UTC)
    return render_home(HomeInput(answers_left=3, per_day=50, resets_at=now, now=now))


async def _refused(call: Any) -> str:
    with pytest.raises(SlackApiError) as raised:
        await call
    return str(raised.value.response["error"])


# --- assistant.threads.* -------------------------------------------------------------------
async def test_suggested_prompts_without_thread_ts_are_accepted(
    fake: FakeSlack, client: AsyncWebClient
) -> None:
    """The agent view's call (channel_id and prompts only) is answered ok and recorded."""
    await client.assistant_threads_setSuggestedPrompts(
        channel_id="D1", prompts=suggested_prompts(), title="Try"
    )
    (call,) = fake.calls_to("assistant.threads.setSuggestedPrompts")
    assert "thread_ts" not in call.args
    assert [] == fake.invalid_payloads


async def test_more_than_four_suggested_prompts_are_refused(
    fake: FakeSlack, client: AsyncWebClient
) -> None:
    """A fifth prompt gets Slack's invalid_arguments, and the test sees why."""
    prompts = [{"title": f"t{i}", "message": f"m{i}"} for i in range(5)]
    error = await _refused(
        client.assistant_threads_setSuggestedPrompts(channel_id="D1", prompts=prompts)
    )
    assert "invalid_arguments" == error
    assert ["no more than 4 items" in p for p in fake.invalid_payloads] == [True]


async def test_suggested_prompts_with_thread_ts_are_flagged_though_slack_says_ok(
    fake: FakeSlack, client: AsyncWebClient
) -> None:
    """With thread_ts the agent view shows nothing although Slack answers ok: the fake
    answers ok too and records the mistake."""
    response = await client.assistant_threads_setSuggestedPrompts(
        channel_id="D1", prompts=suggested_prompts(), thread_ts="1700000000.000001"
    )
    assert response["ok"] is True
    (call,) = fake.calls_to("assistant.threads.setSuggestedPrompts")
    assert "1700000000.000001" == call.args["thread_ts"]
    assert ["thread_ts sent" in p for p in fake.invalid_payloads] == [True]


@pytest.mark.parametrize(
    ("args", "missing"),
    [
        ({"channel_id": "", "thread_ts": "1.2", "status": "is working"}, "channel_id"),
        ({"channel_id": "D1", "thread_ts": "", "status": "is working"}, "thread_ts"),
    ],
)
async def test_set_status_without_channel_or_thread_is_refused(
    fake: FakeSlack, client: AsyncWebClient, args: dict[str, str], missing: str
) -> None:
    """setStatus needs both the channel and the thread."""
    error = await _refused(client.assistant_threads_setStatus(**args))
    assert "invalid_arguments" == error
    assert [f"missing required field: {missing}" in p for p in fake.invalid_payloads] == [True]


async def test_set_status_takes_at_most_ten_loading_messages(
    fake: FakeSlack, client: AsyncWebClient
) -> None:
    """The bot's own loading messages pass; eleven are refused."""
    await client.assistant_threads_setStatus(
        channel_id="D1", thread_ts="1.2", status="is searching", loading_messages=loading_messages()
    )
    assert [] == fake.invalid_payloads
    too_many = [f"step {i}" for i in range(11)]
    call = client.assistant_threads_setStatus(
        channel_id="D1", thread_ts="1.2", status="x", loading_messages=too_many
    )
    assert "invalid_arguments" == await _refused(call)


# --- views.* -----------------------------------------------------------------------------------
async def test_a_valid_home_view_is_published(fake: FakeSlack, client: AsyncWebClient) -> None:
    """views.publish with a user and a Home view is answered with the view and an id."""
    response = await client.views_publish(user_id="UASKER1", view=_home_view())
    assert response["view"]["id"].startswith("V")
    assert [] == fake.invalid_payloads


@pytest.mark.parametrize(
    ("user_id", "view", "why"),
    [
        ("", {"type": "home", "blocks": [{"type": "divider"}]}, "user_id"),
        ("U1", {"type": "modal", "blocks": [{"type": "divider"}]}, "view type"),
        ("U1", {"type": "home", "blocks": [{"type": "divider"}] * 101}, "100 blocks"),
        ("U1", {"type": "home", "blocks": []}, "no blocks"),
        ("U1", {"type": "home", "blocks": [{"type": "section", "text": "x" * 3001}]}, "3000"),
        ("U1", {"type": "home", "blocks": [{"type": "divider"}], "colour": "red"}, "unknown"),
    ],
)
async def test_views_publish_refuses_what_slack_refuses(
    fake: FakeSlack, client: AsyncWebClient, user_id: str, view: dict[str, Any], why: str
) -> None:
    """No user, not a Home view, over 100 blocks, no blocks, a bad block, an unknown field."""
    assert "invalid_arguments" == await _refused(client.views_publish(user_id=user_id, view=view))
    assert [why in p for p in fake.invalid_payloads] == [True], fake.invalid_payloads


async def test_views_open_needs_a_trigger_and_a_modal_with_a_submit_for_inputs(
    fake: FakeSlack, client: AsyncWebClient
) -> None:
    """The feedback modal opens; without a trigger, or an input modal without submit, no."""
    modal = feedback_comment_modal(Vote("a1", "down"))
    await client.views_open(trigger_id="trigger-1", view=modal)
    assert [] == fake.invalid_payloads
    assert "invalid_arguments" == await _refused(client.views_open(trigger_id="", view=modal))
    no_submit = {k: v for k, v in modal.items() if k != "submit"}
    call = client.views_open(trigger_id="trigger-2", view=no_submit)
    assert "invalid_arguments" == await _refused(call)
    assert ["trigger_id" in fake.invalid_payloads[0], "submit" in fake.invalid_payloads[1]] == [
        True,
        True,
    ]


# --- chat.unfurl -------------------------------------------------------------------------------
async def test_unfurls_by_message_or_by_unfurl_id_are_accepted(
    fake: FakeSlack, client: AsyncWebClient
) -> None:
    """channel + ts (a posted message) and unfurl_id + source (the composer) both work."""
    unfurls = {URL: render_unfurl("Create buckets", "How to.", URL, NAME)}
    await client.chat_unfurl(channel="C1", ts="1700000000.000001", unfurls=unfurls)
    await client.chat_unfurl(unfurl_id="U1-abc", source="composer", unfurls=unfurls)
    assert 2 == len(fake.calls_to("chat.unfurl"))
    assert [] == fake.invalid_payloads


def _unfurl_args(**args: Any) -> dict[str, Any]:
    return {"unfurls": {URL: {"blocks": [{"type": "divider"}]}}, **args}


AT_MESSAGE = {"channel": "C1", "ts": "1.2"}
BAD_FORMAT = "invalid_unfurls_format"


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (_unfurl_args(), "invalid_arguments"),
        (_unfurl_args(channel="C1"), "invalid_arguments"),
        (_unfurl_args(unfurl_id="x", source="email"), "invalid_source"),
        (_unfurl_args(**AT_MESSAGE, unfurls={}), BAD_FORMAT),
        (_unfurl_args(**AT_MESSAGE, unfurls={"x": {"blocks": []}}), BAD_FORMAT),
        (_unfurl_args(**AT_MESSAGE, unfurls={URL: {"text": "hi"}}), BAD_FORMAT),
        (_unfurl_args(**AT_MESSAGE, unfurls={URL: {"blocks": [{"type": "no"}]}}), "invalid_blocks"),
    ],
)
async def test_chat_unfurl_refuses_a_missing_target_or_bad_unfurls(
    fake: FakeSlack, client: AsyncWebClient, args: dict[str, Any], error: str
) -> None:
    """No target, a half target, an unknown source, empty or malformed unfurls, bad blocks."""
    assert error == await _refused(client.chat_unfurl(**args))
    assert 1 == len(fake.invalid_payloads)


# --- Block Kit in messages ---------------------------------------------------------------------
async def test_feedback_buttons_pass_and_malformed_context_actions_do_not(
    fake: FakeSlack, client: AsyncWebClient
) -> None:
    """The bot's feedback block posts; a button in context_actions, a long accessibility
    label or a missing negative button is refused."""
    good = feedback_block_for("a1")
    await client.chat_postMessage(channel="C1", text="answer", blocks=[good])
    assert [] == fake.invalid_payloads
    element = good["elements"][0]
    a_button = {
        "type": "button",
        "text": {"type": "plain_text", "text": "x"},
        "action_id": "a",
        "value": "v",
    }
    long_label = {**element["positive_button"], "accessibility_label": "x" * 76}
    one_sided = {k: v for k, v in element.items() if k != "negative_button"}
    bad_blocks = [
        {"type": "context_actions", "elements": [a_button]},
        {"type": "context_actions", "elements": [{**element, "positive_button": long_label}]},
        {"type": "context_actions", "elements": [one_sided]},
    ]
    for block in bad_blocks:
        call = client.chat_postMessage(channel="C1", text="answer", blocks=[block])
        assert "invalid_blocks" == await _refused(call)
    assert 3 == len(fake.invalid_payloads), fake.invalid_payloads


async def test_elements_inside_blocks_are_validated_too(
    fake: FakeSlack, client: AsyncWebClient
) -> None:
    """A button value over 2000 characters is refused (slack_sdk's validate_json alone only
    checks the outer block; the fake validates every element)."""
    button = {
        "type": "button",
        "text": {"type": "plain_text", "text": "Ask again"},
        "action_id": "ask_again:0",
        "value": "q" * 2001,
    }
    block = {"type": "actions", "elements": [button]}
    call = client.chat_postMessage(channel="C1", text="x", blocks=[block])
    assert "invalid_blocks" == await _refused(call)
    assert ["2000" in p for p in fake.invalid_payloads] == [True]


# --- users.info ----------------------------------------------------------------------------------
async def test_users_info_returns_the_time_zone_next_to_the_locale(
    fake: FakeSlack, client: AsyncWebClient
) -> None:
    """Like Slack: `tz` (IANA), `tz_label` and `tz_offset` in seconds; none for a user
    configured without one."""
    fake.locales["U1"] = "it-IT"
    fake.timezones["U1"] = "Europe/Rome"
    fake.timezones["U2"] = None
    rome = (await client.users_info(user="U1", include_locale=True))["user"]
    assert ("it-IT", "Europe/Rome") == (rome["locale"], rome["tz"])
    assert rome["tz_offset"] in (3600, 7200)
    pacific = (await client.users_info(user="U3"))["user"]
    assert "America/Los_Angeles" == pacific["tz"]
    assert pacific["tz_offset"] in (-28800, -25200)
    assert "tz" not in (await client.users_info(user="U2"))["user"]
