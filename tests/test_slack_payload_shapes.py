"""The test payloads for the agent view, Home tab, previews, channel threads, feedback and
modals are ones Bolt routes as it routes Slack's: each is signed, POSTed over loopback to
a real Bolt app behind the bot's own /slack/events route, and lands in the listener (with
the fields) a real Slack payload of that shape would."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from slack_bolt.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from bot.render import (
    ASK_AGAIN_ACTION_RE,
    COMMENT_BLOCK_ID,
    FEEDBACK_MODAL_CALLBACK,
    HomeInput,
    RecentQuestion,
    Vote,
    comment_from_view,
    decode_ask_again,
    feedback_comment_modal,
    render_home,
    vote_from_view,
)
from bot.slack.app import EVENTS_PATH, slack_events_route
from tests.fakes.slack_api import FakeSlack
from tests.slack_requests import ASKER, BOT_TOKEN, SIGNING_SECRET, SlackRequests

URL = "https://docs.cloud.google.com/storage/docs/creating-buckets"
NOW = datetime(2026, 11, 3, 12, 0, tzinfo=UTC)


@dataclass
class Seen:
    """What each listener received, by listener name."""

    bodies: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: defaultdict(list))

    def one(self, listener: str) -> dict[str, Any]:
        (body,) = self.bodies[listener]
        return body


def _bolt_app(client: AsyncWebClient, seen: Seen) -> AsyncApp:
    app = AsyncApp(client=client, signing_secret=SIGNING_SECRET, process_before_response=True)

    def record(name: str) -> Any:
        async def listener(ack: Any, body: dict[str, Any]) -> None:
            await ack()
            seen.bodies[name].append(body)

        return listener

    app.event("app_home_opened")(record("app_home_opened"))
    app.event("link_shared")(record("link_shared"))
    app.message()(record("message"))  # Bolt's message listener: a few subtypes only
    app.event({"type": "message", "subtype": "message_changed"})(record("message_changed"))
    app.event({"type": "message", "subtype": "channel_join"})(record("channel_join"))
    app.action("answer_feedback")(record("feedback"))
    app.action(ASK_AGAIN_ACTION_RE)(record("ask_again"))
    app.view(FEEDBACK_MODAL_CALLBACK)(record("view_submission"))
    return app


@pytest.fixture
async def slack() -> AsyncIterator[tuple[SlackRequests, Seen]]:
    fake = FakeSlack().start()
    client = AsyncWebClient(token=BOT_TOKEN, base_url=fake.url)
    seen = Seen()
    web_app = web.Application()
    web_app.add_routes([slack_events_route(_bolt_app(client, seen))])
    runner = web.AppRunner(web_app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    requests = SlackRequests(fake, f"http://127.0.0.1:{runner.addresses[0][1]}{EVENTS_PATH}")
    requests._session = aiohttp.ClientSession()
    try:
        yield requests, seen
    finally:
        await requests.session.close()
        await runner.cleanup()
        if client.session is not None:
            await client.session.close()
        fake.stop()


async def test_both_app_home_tabs_reach_the_app_home_opened_listener(
    slack: tuple[SlackRequests, Seen],
) -> None:
    """Home carries the view published before; Messages carries no view."""
    requests, seen = slack
    published = render_home(HomeInput(answers_left=1, per_day=50, resets_at=NOW, now=NOW))
    assert 200 == (await requests.app_home_opened("home", published=published)).status
    assert 200 == (await requests.app_home_opened("messages")).status
    home, messages = (b["event"] for b in seen.bodies["app_home_opened"])
    assert ("home", ASKER, "D1") == (home["tab"], home["user"], home["channel"])
    assert published["blocks"] == home["view"]["blocks"]
    assert "messages" == messages["tab"]
    assert "view" not in messages


async def test_posted_and_composer_links_reach_the_link_shared_listener(
    slack: tuple[SlackRequests, Seen],
) -> None:
    """A posted message names its channel and ts; a draft is "COMPOSER" with its unfurl_id
    as message_ts; each link names the unfurl domain it matched."""
    requests, seen = slack
    await requests.link_shared([URL, "https://cloud.google.com/run/docs/x"], message_ts="1.2")
    await requests.link_shared([URL], source="composer")
    posted, draft = (b["event"] for b in seen.bodies["link_shared"])
    assert ("C1", "1.2", "conversations_history") == (
        posted["channel"],
        posted["message_ts"],
        posted["source"],
    )
    assert ["docs.cloud.google.com", "cloud.google.com"] == [
        link["domain"] for link in posted["links"]
    ]
    assert ("COMPOSER", "composer") == (draft["channel"], draft["source"])
    assert draft["unfurl_id"] == draft["message_ts"]


async def test_channel_messages_reach_the_listeners_bolt_picks_for_their_shape(
    slack: tuple[SlackRequests, Seen],
) -> None:
    """Bolt's message listener hears a person's thread reply, but also a classic bot post
    (subtype bot_message) and another app's post (bot_id, no subtype): the bot must filter
    on bot_id itself. Edits and joins go to subtype listeners, not to it."""
    requests, seen = slack
    await requests.channel_message("and in Go?", thread_ts="1.1")
    await requests.channel_message("a digest", subtype="bot_message")
    await requests.channel_message("from an app", user="UAPPBOT", bot_id="BAPP")
    await requests.channel_message("edited", thread_ts="1.1", subtype="message_changed")
    await requests.channel_message("", subtype="channel_join", channel_type="group")
    person, classic, app_post = (b["event"] for b in seen.bodies["message"])
    assert ("and in Go?", "1.1", ASKER, ASKER) == (
        person["text"],
        person["thread_ts"],
        person["user"],
        person["parent_user_id"],
    )
    assert ("bot_message", "BOTHER") == (classic["subtype"], classic["bot_id"])
    assert "user" not in classic
    assert ("BAPP", "UAPPBOT") == (app_post["bot_id"], app_post["user"])
    assert "subtype" not in app_post
    edit = seen.one("message_changed")["event"]
    assert not {"user", "text", "thread_ts"} & set(edit)
    assert ("edited", "1.1") == (edit["message"]["text"], edit["message"]["thread_ts"])
    assert edit["previous_message"]["ts"] == edit["message"]["ts"]
    join = seen.one("channel_join")["event"]
    assert ("group", f"<@{ASKER}> has joined the channel") == (join["channel_type"], join["text"])


async def test_a_feedback_click_reaches_the_action_listener_with_its_value(
    slack: tuple[SlackRequests, Seen],
) -> None:
    """type feedback_buttons, the element's action_id, the clicked button's value, and the
    message it sits under."""
    requests, seen = slack
    value = "fb1:down:a1"
    await requests.feedback_click(value, text="👎", message_ts="1700000000.000009")
    body = seen.one("feedback")
    (action,) = body["actions"]
    assert ("feedback_buttons", "answer_feedback", value) == (
        action["type"],
        action["action_id"],
        action["value"],
    )
    assert "1700000000.000009" == body["container"]["message_ts"]
    assert body["trigger_id"]


async def test_a_submitted_feedback_form_reaches_the_view_listener(
    slack: tuple[SlackRequests, Seen],
) -> None:
    """The typed line and the vote come back in view.state and private_metadata; an empty
    optional field comes back as null."""
    requests, seen = slack
    modal = feedback_comment_modal(Vote("a1", "down"))
    metadata = modal["private_metadata"]
    values = {COMMENT_BLOCK_ID: {"comment": "the flag is gone"}}
    await requests.view_submission(FEEDBACK_MODAL_CALLBACK, metadata, values, view=modal)
    await requests.view_submission(
        FEEDBACK_MODAL_CALLBACK, metadata, {COMMENT_BLOCK_ID: {"comment": None}}
    )
    typed, empty = (b["view"] for b in seen.bodies["view_submission"])
    assert (Vote("a1", "down"), "the flag is gone") == (
        vote_from_view(typed),
        comment_from_view(typed),
    )
    assert modal["blocks"] == typed["blocks"]
    assert "" == comment_from_view(empty)


async def test_an_ask_again_click_on_the_home_tab_reaches_its_action_listener(
    slack: tuple[SlackRequests, Seen],
) -> None:
    """A Home tab click: container type view, no channel; the value decodes to the question."""
    requests, seen = slack
    recent = [RecentQuestion("how do I list buckets?", NOW)]
    view = render_home(HomeInput(answers_left=1, per_day=50, resets_at=NOW, now=NOW, recent=recent))
    (button,) = [
        b["accessory"]
        for b in view["blocks"]
        if b.get("accessory", {}).get("action_id", "").startswith("ask_again:")
    ]
    await requests.home_click(button, view=view)
    body = seen.one("ask_again")
    assert "view" == body["container"]["type"]
    assert "channel" not in body
    assert "how do I list buckets?" == decode_ask_again(body["actions"][0]["value"]).question
