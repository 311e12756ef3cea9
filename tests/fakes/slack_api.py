"""A recording fake of Slack's Web API (aiohttp), served on loopback.

Point the bot at it with `SLACK_API_URL=<fake.url>`. Every call is recorded with its parsed
arguments; every `blocks` list (in messages, views and unfurls) is validated with
`slack_sdk.models` and Slack's size limits, and the arguments of views.*, chat.unfurl and
assistant.threads.* are checked as Slack documents them (`tests/fakes/slack_checks.py`), so
an invalid payload fails the test instead of passing silently: it lands in
`invalid_payloads` and gets Slack's error. Errors and rate limits are scripted per method
(`fake.fail("chat.postMessage", "not_in_channel")`).
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from aiohttp import web

from tests.fakes.serving import ThreadedServer
from tests.fakes.slack_checks import Refusal, check_message, refusal, silently_ignored
from tests.fakes.slack_streams import STREAM_METHODS, Streams, check_session_status

BOT_USER_ID = "UBOT"
#: methods Slack refuses in a conversation the bot is not a member of
_MEMBERS_ONLY = frozenset(
    {
        "chat.postMessage",
        "chat.postEphemeral",
        "reactions.add",
        "reactions.remove",
        "conversations.replies",
    }
)
BOT_ID = "BBOT"


@dataclass
class SlackCall:
    method: str
    args: dict[str, Any]
    headers: dict[str, str]
    #: what the fake answered (e.g. the `ts` of a posted message)
    result: dict[str, Any] = field(default_factory=dict)

    @property
    def token(self) -> str:
        """The token the call was made with (its Authorization header)."""
        return self.headers.get("authorization", "").removeprefix("Bearer ")


@dataclass
class _Scripted:
    error: str | None = None
    status: int = 200
    retry_after: int | None = None


@dataclass
class FakeSlack:
    """The fake's state; `calls` is appended to from the server thread."""

    calls: list[SlackCall] = field(default_factory=list)
    #: user id -> locale returned by users.info
    locales: dict[str, str] = field(default_factory=dict)
    #: user id -> IANA time zone returned by users.info (`tz`, with `tz_offset`); default
    #: America/Los_Angeles, None: no `tz` at all (as for some bots and deleted users)
    timezones: dict[str, str | None] = field(default_factory=dict)
    #: users.info says these users are workspace admins (`is_admin`) / owners (`is_owner`)
    admins: set[str] = field(default_factory=set)
    owners: set[str] = field(default_factory=set)
    #: user id -> (team_id, Grid organisation or None) users.info answers (`team_id`,
    #: `enterprise_user.enterprise_id`); users not in it get neither
    placed: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    #: channels the bot is not a member of: posting, reacting and reading there is refused
    #: (`not_in_channel` for a public C…, `channel_not_found` for a private G… channel)
    outside: set[str] = field(default_factory=set)
    #: private channels (conversations.info says `is_private`; D… ids are DMs)
    private_channels: set[str] = field(default_factory=set)
    #: (channel, thread_ts) -> the thread's messages, oldest first (conversations.replies)
    threads: dict[tuple[str, str], list[dict[str, Any]]] = field(default_factory=dict)
    #: user id -> ids of the channels they are in (users.conversations)
    memberships: dict[str, list[str]] = field(default_factory=dict)
    #: whether auth.test succeeds
    auth_ok: bool = True
    #: OAuth installs: an oauth.v2.access `code` -> its answer (`install_code`)
    oauth_codes: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: bot token -> what auth.test answers for it (each installation's own identity)
    identities: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: ws:// URL handed out by apps.connections.open (Socket Mode tests)
    socket_url: str | None = None
    invalid_payloads: list[str] = field(default_factory=list)
    #: JSON bodies POSTed to response URLs (`fake.response_url(key)`), as (key, body)
    responses: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    #: chat.startStream / appendStream / stopStream's messages and switchable failures
    streams: Streams = field(default_factory=Streams)
    _scripts: dict[str, deque[_Scripted]] = field(default_factory=dict)
    _cond: threading.Condition = field(default_factory=threading.Condition)
    _server: ThreadedServer | None = None
    _ts: int = 0

    # --- scripting ---------------------------------------------------------------------
    def fail(self, method: str, error: str, *, times: int = 1) -> None:
        """The next `times` calls of `method` answer `{"ok": false, "error": error}`."""
        self._scripts.setdefault(method, deque()).extend(
            _Scripted(error=error) for _ in range(times)
        )

    def rate_limit(self, method: str, *, retry_after: int = 1, times: int = 1) -> None:
        self._scripts.setdefault(method, deque()).extend(
            _Scripted(error="ratelimited", status=429, retry_after=retry_after)
            for _ in range(times)
        )

    def server_error(self, method: str, *, status: int = 503, times: int = 1) -> None:
        self._scripts.setdefault(method, deque()).extend(
            _Scripted(error="service_unavailable", status=status) for _ in range(times)
        )

    def install_code(
        self, team: str | None, *, enterprise: str | None = None, org_wide: bool = False
    ) -> tuple[str, str]:
        """(code, bot token): oauth.v2.access answers `code` with an installation in `team`
        (or, org-wide, in `enterprise`) and a new bot token, which auth.test then knows."""
        who = (enterprise if org_wide else team) or ""
        n = len(self.oauth_codes) + 1
        code, token = f"code-{who}-{n}", f"xoxb-{who}-{n:04d}-installed"
        self.oauth_codes[code] = {
            "ok": True,
            "app_id": "A1",
            "access_token": token,
            "token_type": "bot",
            "scope": "chat:write,commands",
            "bot_user_id": BOT_USER_ID,
            "team": None if org_wide else {"id": team, "name": f"Team {team}"},
            "enterprise": {"id": enterprise, "name": f"Org {enterprise}"} if enterprise else None,
            "is_enterprise_install": org_wide,
            "authed_user": {"id": "UINSTALLER"},
        }
        self.identities[token] = {
            "ok": True,
            "url": "https://test.slack.com/",
            "user_id": BOT_USER_ID,
            "bot_id": BOT_ID,
            "user": "gdocs",
            "team": f"Team {team}",
            "team_id": None if org_wide else team,
            "enterprise_id": enterprise,
            "is_enterprise_install": org_wide,
        }
        return code, token

    # --- reading -------------------------------------------------------------------------
    def calls_to(self, method: str) -> list[SlackCall]:
        return [c for c in list(self.calls) if c.method == method]

    def wait_for(self, method: str, count: int = 1, timeout: float = 10.0) -> list[SlackCall]:
        """Block until `count` calls of `method` have arrived (raises on timeout)."""
        with self._cond:
            ok = self._cond.wait_for(lambda: len(self.calls_to(method)) >= count, timeout)
        if not ok:
            seen = [c.method for c in self.calls]
            raise AssertionError(f"expected {count} × {method} within {timeout}s; saw {seen}")
        return self.calls_to(method)

    async def await_calls(
        self, method: str, count: int = 1, timeout: float = 10.0
    ) -> list[SlackCall]:
        """`wait_for` without blocking the test's event loop."""
        return await asyncio.to_thread(self.wait_for, method, count, timeout)

    def everything_sent(self) -> str:
        """Every argument of every call and every response_url body, as one string (for
        secret-leak assertions)."""
        return json.dumps(
            [c.args for c in self.calls] + [body for _, body in self.responses], ensure_ascii=False
        )

    # --- response_url ----------------------------------------------------------------------
    def response_url(self, key: str) -> str:
        """A `response_url` for a slash command or action; POSTs to it land in `responses`."""
        assert self._server is not None
        return f"{self._server.base_url}/response/{key}"

    def acknowledged(self, key: str, body: str) -> None:
        """What the bot answered to the request behind `response_url(key)`: like Slack, show a
        non-empty ack body as that request's first ephemeral response (validated as one)."""
        if not body.strip():
            return
        try:
            message = json.loads(body)
        except ValueError:
            message = None
        if not isinstance(message, dict):
            self.invalid_payloads.append(f"ack: body is not a JSON object: {body[:80]!r}")
            return
        problem = check_message(message)
        if problem:
            self.invalid_payloads.append(f"ack: {problem}")
        with self._cond:
            # the ack went out before anything else for this request, whenever we read it
            first = next((i for i, (k, _) in enumerate(self.responses) if k == key), None)
            self.responses.insert(len(self.responses) if first is None else first, (key, message))
            self._cond.notify_all()

    def responses_to(self, key: str) -> list[dict[str, Any]]:
        return [body for k, body in list(self.responses) if k == key]

    def wait_for_responses(
        self, key: str, count: int = 1, within: float = 10.0
    ) -> list[dict[str, Any]]:
        """Block until `count` bodies have been POSTed to `response_url(key)`."""
        with self._cond:
            ok = self._cond.wait_for(lambda: len(self.responses_to(key)) >= count, within)
        if not ok:
            seen = self.responses_to(key)
            raise AssertionError(f"expected {count} posts to {key} within {within}s; saw {seen}")
        return self.responses_to(key)

    async def await_responses(
        self, key: str, count: int = 1, within: float = 10.0
    ) -> list[dict[str, Any]]:
        """`wait_for_responses` without blocking the test's event loop."""
        return await asyncio.to_thread(self.wait_for_responses, key, count, within)

    # --- serving -------------------------------------------------------------------------
    def start(self) -> FakeSlack:
        app = web.Application(client_max_size=50 * 1024 * 1024)
        app.router.add_post("/api/{method}", self._handle)
        # slack_sdk sends some read methods (users.info, …) as GET with query parameters
        app.router.add_get("/api/{method}", self._handle)
        app.router.add_post("/response/{key}", self._handle_response_url)
        self._server = ThreadedServer(app).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"{self._server.base_url}/api/"

    async def _handle(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        args = await _read_args(request)
        headers = {k.lower(): v for k, v in request.headers.items()}
        call = SlackCall(method, args, headers)
        if method == "chat.startStream" and self.streams.start_gate is not None:
            self.streams.waiting_at_gate += 1
            await asyncio.to_thread(self.streams.start_gate.wait, 10)
        refused = self._refusal(method, args)
        if refused:
            self.invalid_payloads.append(f"{method}: {refused.detail}")
        ignored = silently_ignored(method, args)
        if ignored:
            self.invalid_payloads.append(f"{method}: {ignored}")
        # the answer is decided before the call is published, so a test that waited for the
        # call can read `call.result`
        status, resp_headers = 200, {}
        scripted = self._scripts.get(method)
        if scripted:
            step = scripted.popleft()
            resp_headers = {"Retry-After": str(step.retry_after)} if step.retry_after else {}
            status, call.result = step.status, {"ok": False, "error": step.error}
        elif refused:
            call.result = {
                "ok": False,
                "error": refused.error,
                "detail": refused.detail,
                "response_metadata": {"messages": [refused.detail]},
            }
        else:
            call.result = self._installed(method, args, call.token) or self._answer(method, args)
        with self._cond:
            self.calls.append(call)
            self._cond.notify_all()
        return web.json_response(call.result, status=status, headers=resp_headers)

    def _installed(self, method: str, args: dict[str, Any], token: str) -> dict[str, Any] | None:
        """OAuth installs: oauth.v2.access by code, auth.test by the installation's token."""
        if method == "oauth.v2.access":
            refused = {"ok": False, "error": "invalid_code"}
            return self.oauth_codes.get(str(args.get("code")), refused)
        return self.identities.get(token) if method == "auth.test" else None

    def _refusal(self, method: str, args: dict[str, Any]) -> Refusal | None:
        if method in STREAM_METHODS:
            return self.streams.check(method, args)
        if method == "agents.sessions.setStatus":
            return check_session_status(args)
        return refusal(method, args)

    async def _handle_response_url(self, request: web.Request) -> web.Response:
        """Like Slack's response_url: JSON in, validated like a message, plain `ok` out."""
        try:
            body = await request.json()
        except ValueError:
            body = None
        if not isinstance(body, dict):
            self.invalid_payloads.append("response_url: body is not a JSON object")
            return web.Response(status=400, text="invalid_payload")
        problem = check_message(body)
        if problem:
            self.invalid_payloads.append(f"response_url: {problem}")
        if not body.get("text") and not body.get("blocks") and not body.get("delete_original"):
            self.invalid_payloads.append("response_url: no text, blocks or delete_original")
        with self._cond:
            self.responses.append((request.match_info["key"], body))
            self._cond.notify_all()
        return web.Response(text="ok")

    def _answer(self, method: str, args: dict[str, Any]) -> dict[str, Any]:
        self._ts += 1
        ts = f"1700000000.{self._ts:06d}"
        channel = args.get("channel")
        if method in _MEMBERS_ONLY and channel in self.outside:
            error = "channel_not_found" if str(channel).startswith("G") else "not_in_channel"
            return {"ok": False, "error": error}
        if method == "conversations.replies":
            return self._replies(str(channel), str(args.get("ts", "")), args.get("limit"))
        if method == "users.conversations":
            found = self.memberships.get(str(args.get("user", "")), [])
            channels = [{"id": c, "is_member": c not in self.outside} for c in found]
            return {"ok": True, "channels": channels, "response_metadata": {"next_cursor": ""}}
        if method == "auth.test":
            if not self.auth_ok:
                return {"ok": False, "error": "invalid_auth"}
            return {
                "ok": True,
                "user_id": BOT_USER_ID,
                "bot_id": BOT_ID,
                "team_id": "T1",
                "user": "gdocs",
                "team": "Test",
            }
        if method in STREAM_METHODS:
            return self.streams.answer(method, args, ts)
        conflict = self.streams.conflict(method, args)
        if conflict:
            return {"ok": False, "error": conflict}
        if method in ("chat.postMessage", "chat.postEphemeral", "chat.update"):
            return {
                "ok": True,
                "channel": args.get("channel"),
                "ts": args.get("ts") or ts,
                "message_ts": ts,
            }
        if method == "users.info":
            return {"ok": True, "user": self._user(args.get("user", ""))}
        if method == "conversations.info":
            private, im = channel in self.private_channels, str(channel).startswith("D")
            found = {"id": channel, "is_private": private or im, "is_im": im, "is_mpim": False}
            return {"ok": True, "channel": found}
        if method == "conversations.members":  # from `memberships`, one page
            members = [u for u, found in self.memberships.items() if channel in found]
            return {"ok": True, "members": members, "response_metadata": {"next_cursor": ""}}
        if method == "chat.getPermalink":
            link = f"https://test.slack.com/archives/{channel}/p{args.get('message_ts', '')}"
            return {"ok": True, "channel": channel, "permalink": link.replace(".", "")}
        if method in ("views.publish", "views.open", "views.update"):
            view = args.get("view")
            view = json.loads(view) if isinstance(view, str) else view
            return {"ok": True, "view": {**view, "id": f"V{self._ts:06d}", "hash": ts}}
        if method == "apps.connections.open":
            return {"ok": True, "url": self.socket_url or "ws://127.0.0.1:9/"}
        if method == "files.getUploadURLExternal":
            assert self._server is not None
            return {
                "ok": True,
                "upload_url": f"{self._server.base_url}/api/upload.bin",
                "file_id": f"F{self._ts}",
            }
        if method == "upload.bin":
            return {"ok": True}
        if method == "files.completeUploadExternal":
            return {
                "ok": True,
                "files": [
                    {"id": f["id"], "title": f.get("title", "")}
                    for f in _json_list(args.get("files"))
                ],
            }
        return {"ok": True}

    def _replies(self, channel: str, ts: str, limit: Any) -> dict[str, Any]:
        """conversations.replies: the thread's messages from its first, up to `limit`."""
        messages = self.threads.get((channel, ts))
        if messages is None:
            return {"ok": False, "error": "thread_not_found"}
        count = int(limit) if str(limit or "").isdigit() else len(messages)
        return {"ok": True, "messages": messages[: max(count, 1)], "has_more": False}

    def _user(self, user: str) -> dict[str, Any]:
        """users.info's `user`: id, locale, whether an admin or owner and, like Slack, the
        time zone and its offset."""
        found: dict[str, Any] = {
            "id": user,
            "locale": self.locales.get(user, "en-US"),
            "is_admin": user in self.admins or user in self.owners,
            "is_owner": user in self.owners,
        }
        if user in self.placed:
            team, org = self.placed[user]
            found["team_id"] = team
            if org is not None:
                found["enterprise_user"] = {"id": user, "enterprise_id": org, "teams": [team]}
        tz = self.timezones.get(user, "America/Los_Angeles")
        if tz is not None:
            offset = datetime.now(ZoneInfo(tz)).utcoffset()
            found["tz"] = tz
            found["tz_label"] = datetime.now(ZoneInfo(tz)).tzname()
            found["tz_offset"] = int(offset.total_seconds()) if offset is not None else 0
        return found


async def _read_args(request: web.Request) -> dict[str, Any]:
    ctype = request.content_type
    if ctype == "application/json":
        data = await request.json()
        args = dict(data) if isinstance(data, dict) else {}
    elif ctype in ("application/x-www-form-urlencoded", "multipart/form-data"):
        form = await request.post()
        args = {
            k: (
                v
                if isinstance(v, str)
                else getattr(v, "file", None) and v.file.read().decode("utf-8", "replace")
            )
            for k, v in form.items()
        }
    elif request.method == "GET":
        args = {}
    else:
        args = {"_raw": (await request.read()).decode("utf-8", "replace")}
    args.update({k: v for k, v in request.query.items() if k not in args})
    return args


def _json_list(value: Any) -> list[dict[str, Any]]:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return []
    return value if isinstance(value, list) else []
