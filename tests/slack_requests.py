"""What Slack sends the bot, signed as Slack signs it: slash commands, Events API callbacks
and block actions, POSTed to the bot's /slack/events with the time each took to be acked.

`SlackRequests` only builds and sends requests; `tests.slack_harness.running_bot` runs the
bot they go to. Response URLs point at the recording `FakeSlack`.
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import time
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlencode

import aiohttp

from tests.fakes import slack_event_payloads as payloads
from tests.fakes.slack_api import BOT_USER_ID, FakeSlack
from tests.fakes.slack_payloads import slash_command_form

SIGNING_SECRET = "sig-secret-5f3c1a9e7b2d4c6a8e0f"
BOT_TOKEN = "xoxb-bot-token-9d8c7b6a5f4e3d2c1b0a"
API_KEY = "test-key"
#: a well-formed user id, so answers can name the asker
ASKER = "UASKER1"
#: nothing listens on the discard port: anything sent there is refused at once
CLOSED_URL = "http://127.0.0.1:9/mcp"


def sign(
    body: str, *, secret: str = SIGNING_SECRET, timestamp: int | None = None
) -> dict[str, str]:
    """Slack's request signature headers for `body`."""
    ts = str(int(time.time()) if timestamp is None else timestamp)
    base = f"v0:{ts}:{body}".encode()
    digest = hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()
    return {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": f"v0={digest}"}


@dataclass
class Sent:
    """What the bot answered to one HTTP request."""

    status: int
    body: str
    #: seconds from sending the request to having the whole answer (Slack's 3 s ack budget)
    elapsed: float = 0.0
    #: the response_url key of a command or action (see `FakeSlack.responses_to`)
    key: str | None = None


class SlackRequests:
    """Speaks to the bot at `url` as Slack does; `session` is set by whoever runs the bot."""

    def __init__(self, fake: FakeSlack, url: str) -> None:
        self.fake = fake
        self.url = url
        self._ids = itertools.count(1)
        self._session: aiohttp.ClientSession | None = None

    @property
    def session(self) -> aiohttp.ClientSession:
        assert self._session is not None
        return self._session

    def next_id(self) -> int:
        return next(self._ids)

    async def post(
        self, body: Any, *, content_type: str, headers: dict[str, str] | None = None
    ) -> Sent:
        all_headers = {"Content-Type": content_type, **(headers or {})}
        started = time.perf_counter()
        async with self.session.post(self.url, data=body, headers=all_headers) as resp:
            text = await resp.text()
        return Sent(resp.status, text, elapsed=time.perf_counter() - started)

    async def post_signed(
        self, body: str, *, content_type: str, headers: dict[str, str] | None = None
    ) -> Sent:
        return await self.post(
            body, content_type=content_type, headers={**sign(body), **(headers or {})}
        )

    async def post_form(self, body: str, key: str, *, acknowledged: bool = True) -> Sent:
        """A signed form POST whose response URL is `key`'s; its acknowledgement recorded."""
        sent = await self.post_signed(body, content_type="application/x-www-form-urlencoded")
        sent.key = key
        if acknowledged and sent.status == 200:
            self.fake.acknowledged(key, sent.body)
        return sent

    def command_body(
        self,
        text: str,
        *,
        user: str = ASKER,
        channel: str = "C1",
        key: str | None = None,
        team: str = "T1",
    ) -> tuple[str, str]:
        n = self.next_id()
        key = key or f"cmd{n}"
        form = slash_command_form(
            text, response_url=self.fake.response_url(key), user=user, channel=channel
        )
        form["team_id"] = team  # another team's: a guest from another organisation
        return urlencode(form), key

    async def command(
        self,
        text: str,
        *,
        user: str = ASKER,
        channel: str = "C1",
        key: str | None = None,
        team: str = "T1",
    ) -> Sent:
        """A signed `/gdocs <text>`."""
        body, key = self.command_body(text, user=user, channel=channel, key=key, team=team)
        return await self.post_form(body, key)

    def event_body(
        self, event: dict[str, Any], *, event_id: str | None = None, shared: bool = False
    ) -> str:
        """`shared`: in a Slack Connect channel (`is_ext_shared_channel`)."""
        return json.dumps(
            {
                "token": "deprecated-verification-token",
                "team_id": "T1",
                "api_app_id": "A1",
                "type": "event_callback",
                "event_id": event_id or f"Ev{self.next_id():06d}",
                "event_time": int(time.time()),
                "is_ext_shared_channel": shared,
                "authorizations": [{"team_id": "T1", "user_id": BOT_USER_ID, "is_bot": True}],
                "event": event,
            }
        )

    async def event(
        self,
        event: dict[str, Any],
        *,
        event_id: str | None = None,
        retry_num: int | None = None,
        shared: bool = False,
    ) -> Sent:
        """A signed Events API callback (optionally a retry, as Slack marks them)."""
        body = self.event_body(event, event_id=event_id, shared=shared)
        headers = {}
        if retry_num is not None:
            headers = {"X-Slack-Retry-Num": str(retry_num), "X-Slack-Retry-Reason": "http_timeout"}
        return await self.post_signed(body, content_type="application/json", headers=headers)

    async def mention(
        self,
        text: str,
        *,
        user: str = ASKER,
        channel: str = "C1",
        ts: str | None = None,
        thread_ts: str | None = None,
        user_team: str | None = None,
        shared: bool = False,
    ) -> Sent:
        """`user_team`: the asker's own team, when not the channel's (a Slack Connect guest)."""
        event: dict[str, Any] = {
            "type": "app_mention",
            "user": user,
            "text": f"<@{BOT_USER_ID}> {text}",
            "ts": ts or f"1710000000.{self.next_id():06d}",
            "channel": channel,
            "event_ts": ts or "1710000000.000000",
        }
        if thread_ts:
            event["thread_ts"] = thread_ts
        if user_team:
            event["user_team"] = user_team
        return await self.event(event, shared=shared)

    async def dm(self, text: str, *, user: str = ASKER, channel: str = "D1", **extra: Any) -> Sent:
        event = {
            "type": "message",
            "channel_type": "im",
            "user": user,
            "text": text,
            "ts": f"1710000100.{self.next_id():06d}",
            "channel": channel,
            **extra,
        }
        return await self.event(event)

    async def action(
        self,
        action: dict[str, Any],
        *,
        user: str = ASKER,
        channel: str = "C1",
        message_ts: str = "1700000000.000001",
        thread_ts: str | None = None,
        ephemeral: bool = False,
        key: str | None = None,
        team: str = "T1",
    ) -> Sent:
        """A signed block_actions click on a button of the message at `message_ts`; with
        `ephemeral`, on a message only the clicker sees (Slack sends no `message` then);
        `team`: the clicker's (another team's: a guest)."""
        n = self.next_id()
        key = key or f"act{n}"
        container: dict[str, Any] = {
            "type": "message",
            "message_ts": message_ts,
            "channel_id": channel,
            "is_ephemeral": ephemeral,
        }
        payload: dict[str, Any] = {
            "type": "block_actions",
            "team": {"id": "T1", "domain": "test"},
            "user": {"id": user, "username": f"user-{user}", "team_id": team},
            "api_app_id": "A1",
            "token": "deprecated-verification-token",
            "container": container,
            "trigger_id": f"trigger-a{n}.{time.time_ns()}",
            "channel": {"id": channel, "name": "general"},
            "response_url": self.fake.response_url(key),
            "actions": [{"block_id": "show_docs", "action_ts": str(time.time()), **action}],
        }
        if not ephemeral:
            message: dict[str, Any] = {"type": "message", "ts": message_ts, "text": "answer"}
            if thread_ts:
                message["thread_ts"] = thread_ts
                container["thread_ts"] = thread_ts
            payload["message"] = message
        body = urlencode({"payload": json.dumps(payload)})
        return await self.post_form(body, key)

    # --- agent view, Home tab, previews, threads, feedback (tests/fakes/slack_event_payloads)
    async def app_home_opened(
        self,
        tab: Literal["home", "messages"] = "home",
        *,
        user: str = ASKER,
        channel: str = "D1",
        published: dict[str, Any] | None = None,
    ) -> Sent:
        """The person opens the bot's Home tab (`tab="home"`, with the view published
        before, if any) or its Messages tab (`tab="messages"`)."""
        event = payloads.app_home_opened_event(
            user=user,
            channel=channel,
            tab=tab,
            published=published,
        )
        return await self.event(event)

    async def link_shared(
        self,
        links: list[str],
        *,
        user: str = ASKER,
        channel: str = "C1",
        source: Literal["conversations_history", "composer"] = "conversations_history",
        message_ts: str | None = None,
        unfurl_id: str | None = None,
        thread_ts: str | None = None,
    ) -> Sent:
        """Someone posts (or, with `source="composer"`, types) links to unfurl domains."""
        event = payloads.link_shared_event(
            links,
            user=user,
            channel=channel,
            source=source,
            message_ts=message_ts,
            unfurl_id=unfurl_id,
            thread_ts=thread_ts,
        )
        return await self.event(event)

    async def channel_message(
        self,
        text: str,
        *,
        user: str = ASKER,
        channel: str = "C1",
        thread_ts: str | None = None,
        parent_user_id: str | None = None,
        subtype: payloads.MessageSubtype | None = None,
        bot_id: str | None = None,
        channel_type: Literal["channel", "group"] = "channel",
        user_team: str | None = None,
        shared: bool = False,
    ) -> Sent:
        """A message in a public (`channel`) or private (`group`) channel the bot is in,
        optionally a thread reply, an edit, a join or another bot's post; `user_team`: the
        writer's team, when another's (a Slack Connect guest), as Slack says it."""
        event = payloads.channel_message_event(
            text,
            user=user,
            channel=channel,
            channel_type=channel_type,
            thread_ts=thread_ts,
            parent_user_id=parent_user_id,
            subtype=subtype,
            bot_id=bot_id,
        )
        if user_team:
            event |= {"user_team": user_team, "source_team": user_team, "team": user_team}
        return await self.event(event, shared=shared)

    async def feedback_click(
        self,
        value: str,
        *,
        user: str = ASKER,
        channel: str = "C1",
        message_ts: str = "1700000000.000001",
        thread_ts: str | None = None,
        action_id: str = "answer_feedback",
        block_id: str = "answer_feedback",
        text: str = "👍",
        ephemeral: bool = False,
        key: str | None = None,
    ) -> Sent:
        """A click on 👍 / 👎 (`value` is the clicked button's) under the bot's message."""
        action = payloads.feedback_action(value, action_id=action_id, block_id=block_id, text=text)
        return await self.action(
            action,
            user=user,
            channel=channel,
            message_ts=message_ts,
            thread_ts=thread_ts,
            ephemeral=ephemeral,
            key=key,
        )

    def shortcut_payload(
        self,
        text: str,
        *,
        author: str,
        user: str = ASKER,
        channel: str = "C1",
        ts: str | None = None,
        thread_ts: str | None = None,
        key: str | None = None,
        callback_id: str = "ask_gdocs",
        team: str = "T1",
    ) -> tuple[dict[str, Any], str]:
        """The payload of "Ask Google's docs" used by `user` on `author`'s message, and the
        key of its response_url."""
        n = self.next_id()
        key = key or f"sc{n}"
        message: dict[str, Any] = {"user": author, "text": text}
        message["ts"] = ts or f"1710000300.{n:06d}"
        if thread_ts:
            message["thread_ts"] = thread_ts
        payload = payloads.message_shortcut(
            user=user,
            channel=channel,
            message=message,
            callback_id=callback_id,
            response_url=self.fake.response_url(key),
            trigger_id=f"trigger-s{n}.{time.time_ns()}",
        )
        payload["user"]["team_id"] = team  # another team's: a guest
        return payload, key

    async def message_shortcut(self, text: str, *, author: str, **how: Any) -> Sent:
        """A signed message shortcut ("Ask Google's docs") on `author`'s message."""
        payload, key = self.shortcut_payload(text, author=author, **how)
        body = urlencode({"payload": json.dumps(payload)})
        return await self.post_form(body, key, acknowledged=False)

    async def home_click(
        self, action: dict[str, Any], *, view: dict[str, Any], user: str = ASKER
    ) -> Sent:
        """A click on a button of the Home tab `view` (e.g. Ask again): no channel, no
        response_url (answers go through the Web API)."""
        trigger = f"trigger-h{self.next_id()}.{time.time_ns()}"
        payload = payloads.home_tab_actions(action, user=user, view=view, trigger_id=trigger)
        body = urlencode({"payload": json.dumps(payload)})
        return await self.post_signed(body, content_type="application/x-www-form-urlencoded")

    async def view_submission(
        self,
        callback_id: str,
        private_metadata: str,
        values: dict[str, dict[str, Any]],
        *,
        user: str = ASKER,
        view: dict[str, Any] | None = None,
    ) -> Sent:
        """The person submits a modal; `values[block_id][action_id]` is each text input's
        value (None: left empty). The ack's body is the response_action, if any."""
        trigger = f"trigger-v{self.next_id()}.{time.time_ns()}"
        payload = payloads.view_submission(
            user=user,
            callback_id=callback_id,
            private_metadata=private_metadata,
            values=values,
            trigger_id=trigger,
            view=view,
        )
        body = urlencode({"payload": json.dumps(payload)})
        return await self.post_signed(body, content_type="application/x-www-form-urlencoded")

    # --- Enterprise Grid: an org-wide install (tests/fakes/slack_event_payloads `grid_*`) ---
    async def grid_event(self, event: dict[str, Any], *, team: str, enterprise: str = "E1") -> Sent:
        """A signed event of an org-wide install of `enterprise`, in workspace `team`."""
        body = payloads.grid_event_callback(
            event,
            team=team,
            enterprise=enterprise,
            bot_user=BOT_USER_ID,
            event_id=f"Ev{self.next_id():06d}",
        )
        return await self.post_signed(json.dumps(body), content_type="application/json")

    async def grid_mention(
        self,
        text: str,
        *,
        user: str,
        team: str,
        enterprise: str = "E1",
        channel: str = "C1",
        ts: str | None = None,
    ) -> Sent:
        """A mention from `user` of workspace `team`: on Grid `user_team` may name only the
        organisation (slack_bolt/request/internals.py), `team` the workspace."""
        ts = ts or f"1710000000.{self.next_id():06d}"
        event = {
            "type": "app_mention",
            "user": user,
            "text": f"<@{BOT_USER_ID}> {text}",
            "ts": ts,
            "channel": channel,
            "event_ts": ts,
            "user_team": enterprise,
        }
        return await self.grid_event(event, team=team, enterprise=enterprise)

    async def grid_shortcut(
        self, text: str, *, author: str, team: str, enterprise: str = "E1", **how: Any
    ) -> Sent:
        """ "Ask Google's docs" from a person of workspace `team`, with `team: null`."""
        payload, key = self.shortcut_payload(text, author=author, team=team, **how)
        payload = payloads.grid_interaction(payload, team=team, enterprise=enterprise)
        body = urlencode({"payload": json.dumps(payload)})
        return await self.post_form(body, key, acknowledged=False)

    async def grid_command(
        self, text: str, *, user: str, team: str, enterprise: str = "E1", channel: str = "C1"
    ) -> Sent:
        """`/gdocs <text>` run in workspace `team` of an org-wide install."""
        body, key = self.command_body(text, user=user, channel=channel, team=team)
        org = {"enterprise_id": enterprise, "enterprise_name": f"Org {enterprise}"}
        body += "&" + urlencode(org | {"is_enterprise_install": "true"})
        body = body.replace("is_enterprise_install=false&", "")
        return await self.post_form(body, key)

    async def grid_action(
        self,
        action: dict[str, Any],
        *,
        user: str,
        team: str,
        enterprise: str = "E1",
        channel: str = "C1",
        message_ts: str = "1700000000.000001",
        thread_ts: str | None = None,
    ) -> Sent:
        """A click on a channel message's button by a person of workspace `team` of an
        org-wide install (`team: null`)."""
        n = self.next_id()
        key = f"act{n}"
        message: dict[str, Any] = {"type": "message", "ts": message_ts, "text": "answer"}
        container = {"type": "message", "message_ts": message_ts, "channel_id": channel}
        if thread_ts:
            message["thread_ts"] = container["thread_ts"] = thread_ts
        payload = {
            "type": "block_actions",
            "user": {"id": user, "username": f"user-{user}"},
            "api_app_id": "A1",
            "token": "deprecated-verification-token",
            "container": container | {"is_ephemeral": False},
            "trigger_id": f"trigger-a{n}.{time.time_ns()}",
            "channel": {"id": channel, "name": "general"},
            "message": message,
            "response_url": self.fake.response_url(key),
            "actions": [{"block_id": "b", "action_ts": str(time.time()), **action}],
        }
        payload = payloads.grid_interaction(payload, team=team, enterprise=enterprise)
        body = urlencode({"payload": json.dumps(payload)})
        return await self.post_form(body, key)
