"""The playground's aiohttp server: the page, a fake Slack recording the bot's calls, `/ui/send`
(what the page does, signed, to the bot's /slack/events) and `/ui/log` (long-polled by the page)."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import itertools
import json
import secrets
import signal
import socket
import sys
import time
from collections.abc import Callable
from importlib.resources import files
from typing import Any
from urllib.parse import urlencode

import aiohttp
from aiohttp import web
from aiohttp.typedefs import Handler
from pydantic import AnyHttpUrl, SecretStr

from bot.observability.logging import configure_logging
from bot.redact import redact_url
from bot.serving.assembly import Bot, open_bot
from bot.settings import Settings

DEFAULT_PORT = 3100
#: the workspace the page shows: one person, a channel and the DM with the bot
TEAM, USER, BOT_USER, BOT_ID = "T0PLAY", "U0YOU", "U0GDOCS", "B0GDOCS"
CHANNEL, DM = "C0GENERAL", "D0GDOCS"
#: how long one /ui/log request waits for a new call before answering "nothing new"
POLL_SECONDS = 15.0
FORM = "application/x-www-form-urlencoded"
_Obj = dict[str, Any]
_APP = {"team_id": TEAM, "api_app_id": "A0PLAY"}
#: the person, an admin so that the channel settings can be tried too
_YOU: _Obj = {"name": "you", "locale": "en-US", "is_admin": True, "tz": "America/Los_Angeles"}
#: manifest.yml's message shortcuts (an installed package has none; a test compares them)
SHORTCUTS = (("ask_gdocs", "Ask Google's docs"), ("save_team_answer", "Save as team answer"))


def run(settings: Settings, port: int = DEFAULT_PORT) -> int:
    """Serve the playground until Ctrl-C; the exit status (2: Google settings missing)."""
    problems = settings.google_problems()
    if problems:
        hint = "the playground needs Google settings only (environment or ./.env, see .env.example)"
        print("\n".join(f"gdocs-bot: {line}" for line in [*problems, hint]), file=sys.stderr)
        return 2
    configure_logging(settings)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(("127.0.0.1", port))  # loopback only: the page can post as anyone
    except (OSError, OverflowError) as exc:
        sock.close()
        why = exc.strerror if isinstance(exc, OSError) else "not a port"
        print(f"gdocs-bot: cannot listen on 127.0.0.1:{port} ({why}); "
              "choose another port with --port N", file=sys.stderr)  # fmt: skip
        return 1
    with contextlib.suppress(KeyboardInterrupt):
        return asyncio.run(_serve(settings, sock))
    return 0


async def _serve(settings: Settings, sock: socket.socket) -> int:
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    secret = secrets.token_hex(16)
    # Slack's side made up in memory and aimed at this server; state in memory unless given
    given = "state_url" in settings.model_fields_set
    settings = settings.model_copy(
        update={
            "slack_bot_token": SecretStr(f"xoxb-playground-{secrets.token_hex(8)}"),
            "slack_signing_secret": SecretStr(secret),
            "slack_app_token": None,
            "slack_api_url": AnyHttpUrl(f"{base}/api/"),
            "state_url": settings.state_url if given else SecretStr("memory://"),
            "host": "127.0.0.1",
        }
    )
    async with open_bot(settings) as bot, aiohttp.ClientSession() as session:
        workspace = Workspace(base, secret, session)
        runner = web.AppRunner(workspace.web_app(bot), access_log=None, shutdown_timeout=1.0)
        await runner.setup()
        await web.SockSite(runner, sock).start()
        probes = asyncio.create_task(bot.readiness.run_probes())
        bot.readiness.slack_authenticated = True
        state = redact_url(settings.state_url.get_secret_value())
        print(f"gdocs-bot playground listening on {base}/ (state: {state}); Ctrl-C stops",
              flush=True)  # fmt: skip
        stop = asyncio.Event()
        for signum in (signal.SIGINT, signal.SIGTERM):
            asyncio.get_running_loop().add_signal_handler(signum, stop.set)
        await stop.wait()
        probes.cancel()
        workspace.closing = True
        workspace.record("closing", {})  # ends the page's long polls at once
        await bot.deps.inflight.drain(2.0)
        await runner.cleanup()
    return 0


class Workspace:
    """The fake Slack: every Web API call, response_url post, ack and typed message is one
    entry of `log`; the page reduces the log to what Slack would show."""

    def __init__(self, base: str, secret: str, session: aiohttp.ClientSession) -> None:
        self.base, self._secret, self._session = base, secret, session
        self.log: list[_Obj] = []
        self.closing = False
        self._changed = asyncio.Event()
        self._ids = itertools.count(1)
        self._streaming: set[str] = set()  # streams not finished by the bot
        self._stopped: set[str] = set()  # streams the person stopped: no more appends
        self._messages: dict[str, list[_Obj]] = {}  # thread ts -> its messages

    def web_app(self, bot: Bot) -> web.Application:
        from bot.slack.app import slack_events_route

        app = web.Application(client_max_size=20 * 1024 * 1024, middlewares=[self._only_here])
        app.router.add_get("/", self._page)
        app.router.add_get("/ui/log", self._poll)
        app.router.add_post("/ui/send", self._send)
        app.router.add_route("*", "/api/{method}", self._api)
        app.router.add_post("/response/{key}", self._response_url)
        app.add_routes([slack_events_route(bot.app)])
        return app

    def record(self, method: str, args: _Obj, result: _Obj | None = None) -> None:
        self.log.append({"n": len(self.log) + 1, "method": method, "args": args, "result": result})
        self._changed.set()
        self._changed = asyncio.Event()

    def next_ts(self) -> str:
        return f"{int(time.time())}.{next(self._ids):06d}"

    async def _page(self, request: web.Request) -> web.Response:
        html = files("bot.playground").joinpath("page.html").read_text(encoding="utf-8")
        ids: _Obj = {"team": TEAM, "user": USER, "botUser": BOT_USER, "botId": BOT_ID}
        ids |= {"channel": CHANNEL, "dm": DM, "shortcuts": SHORTCUTS}
        # the ids as JSON inside a <script>: `<` escaped so no text can close the element
        script = json.dumps(ids).replace("<", "\\u003c")
        return web.Response(text=html.replace("/*IDS*/{}", script), content_type="text/html")

    async def _poll(self, request: web.Request) -> web.Response:
        """The entries after `after`; waits up to POLL_SECONDS for one to arrive."""
        after = int(request.query.get("after", "0") or 0)
        if len(self.log) <= after and not self.closing:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), POLL_SECONDS)
        return web.json_response(self.log[after:])

    async def _api(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        args = await _args(request)
        result = self._answer(method, args)
        self.record(method, args, result)
        return web.json_response(result)

    async def _response_url(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.record("response_url", {"key": request.match_info["key"], "body": body})
        return web.Response(text="ok")

    @web.middleware
    async def _only_here(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        """Other sites the browser has open cannot use the page: a renamed host (DNS
        rebinding) is refused, and /ui/send wants JSON, which a cross-site form cannot send."""
        port = self.base.rsplit(":", 1)[1]
        if request.host not in (f"127.0.0.1:{port}", f"localhost:{port}"):
            return web.Response(status=421, text="use the address the playground printed")
        if request.path == "/ui/send" and request.content_type != "application/json":
            return web.Response(status=415, text="JSON only")
        return await handler(request)

    async def _send(self, request: web.Request) -> web.Response:
        """One thing the person did on the page, sent to the bot as Slack would send it."""
        sent = await request.json()
        if "form" in sent:  # a slash command
            body, kind = urlencode(sent["form"] | _APP), FORM
        elif "payload" in sent:  # a click: block_actions, view_submission
            body, kind = urlencode({"payload": json.dumps(sent["payload"])}), FORM
        else:
            body, kind = self._event(sent["event"]), "application/json"
        if sent.get("stop"):  # Slack refuses appends at once; the bot may still end it
            self._stopped.add(str(sent["stop"]))
        headers = {"Content-Type": kind, **_signed(self._secret, body)}
        async with self._session.post(f"{self.base}/slack/events", data=body, headers=headers) as r:
            answer = await r.text()
        if sent.get("key") and answer.strip():
            self.record("ack", {"key": sent["key"], "body": _json(answer)})
        return web.json_response({"status": r.status, "body": answer})

    def _event(self, event: _Obj) -> str:
        """An Events API callback around `event`; a person's message is recorded to be drawn."""
        event.setdefault("ts", self.next_ts())
        event.setdefault("event_ts", event["ts"])
        if event.get("type") in ("message", "app_mention"):
            self.record("user.message", dict(event))
            thread = str(event.get("thread_ts") or event["ts"])
            self._messages.setdefault(thread, []).append(event)
        callback: _Obj = {"token": "playground", **_APP, "type": "event_callback", "event": event}
        callback |= {"event_id": f"Ev{next(self._ids):08d}", "event_time": int(time.time())}
        callback["authorizations"] = [{"team_id": TEAM, "user_id": BOT_USER, "is_bot": True}]
        return json.dumps(callback)

    def _answer(self, method: str, args: _Obj) -> _Obj:
        """Slack's answer, plausible enough for the bot's flows."""
        ts = str(args.get("ts") or self.next_ts())
        if method == "auth.test":
            return {"ok": True, "user_id": BOT_USER, "bot_id": BOT_ID, "team_id": TEAM,
                    "user": "gdocs", "team": "Playground", "url": f"{self.base}/"}  # fmt: skip
        if method == "chat.startStream":
            ts = self.next_ts()
            self._streaming.add(ts)
        elif method in ("chat.appendStream", "chat.stopStream") and ts not in self._streaming:
            return {"ok": False, "error": "message_not_in_streaming_state"}
        elif method == "chat.appendStream" and ts in self._stopped:
            return {"ok": False, "error": "stopped_by_user"}
        elif method == "chat.stopStream":
            self._streaming.discard(ts)
        elif method == "chat.update" and ts in self._streaming:
            return {"ok": False, "error": "streaming_state_conflict"}
        elif method == "chat.postMessage":
            thread = str(args.get("thread_ts") or ts)
            bot_message = {"type": "message", "ts": ts, "bot_id": BOT_ID, "user": BOT_USER}
            self._messages.setdefault(thread, []).append({**bot_message, "text": args.get("text")})
        if (found := _READS.get(method)) is not None:
            return found(self, args)
        # a post to a person's id lands in their DM with the bot
        where = args.get("channel") or args.get("channel_id")
        channel = DM if where == USER else where
        return {"ok": True, "channel": channel, "ts": ts, "message_ts": ts}

    def _replies(self, args: _Obj) -> _Obj:
        messages = self._messages.get(str(args.get("ts")))
        if not messages:
            return {"ok": False, "error": "thread_not_found"}
        return {"ok": True, "messages": messages, "has_more": False}

    def _view(self, args: _Obj) -> _Obj:
        view = _json(args.get("view"))
        return {"ok": True, "view": {**view, "id": f"V{next(self._ids):08d}", "hash": "h"}}

    def _upload_url(self, args: _Obj) -> _Obj:
        file_id = f"F{next(self._ids):08d}"
        return {"ok": True, "file_id": file_id, "upload_url": f"{self.base}/api/upload?f={file_id}"}

    def _conversation(self, args: _Obj) -> _Obj:
        public = {"name": "general", "is_channel": True, "is_private": False}
        found = public if args.get("channel") == CHANNEL else {"is_im": True}
        return {"ok": True, "channel": {"id": args.get("channel"), "is_member": True, **found}}

    def _files(self, args: _Obj) -> _Obj:
        found = _json(args.get("files"))
        return {"ok": True, "files": [{"id": f.get("id"), "title": f.get("title")} for f in found]}


_READS: dict[str, Callable[[Workspace, _Obj], _Obj]] = {
    "users.info": lambda _, a: {"ok": True, "user": {"id": a.get("user"), **_YOU}},
    "conversations.info": Workspace._conversation,
    "conversations.members": lambda _, a: {"ok": True, "members": [USER, BOT_USER]},
    "users.conversations": lambda _, a: {"ok": True, "channels": [{"id": CHANNEL}]},
    "conversations.replies": Workspace._replies,
    **dict.fromkeys(("views.publish", "views.open", "views.update", "views.push"), Workspace._view),
    "files.getUploadURLExternal": Workspace._upload_url,
    "files.completeUploadExternal": Workspace._files,
}


def _signed(secret: str, body: str) -> dict[str, str]:
    """The headers of Slack's v0 signature of `body`."""
    ts = str(int(time.time()))
    mac = hmac.new(secret.encode(), f"v0:{ts}:{body}".encode(), hashlib.sha256).hexdigest()
    return {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": f"v0={mac}"}


async def _args(request: web.Request) -> _Obj:
    """A Web API call's arguments: JSON, a form, a query string, or (a file upload) raw."""
    args: _Obj = dict(request.query)
    if request.content_type == "application/json":
        data = await request.json()
        args |= data if isinstance(data, dict) else {}
    elif request.content_type in ("application/x-www-form-urlencoded", "multipart/form-data"):
        form = await request.post()
        args |= {k: v for k, v in form.items() if isinstance(v, str)}
    elif request.can_read_body:
        args["content"] = (await request.read()).decode("utf-8", "replace")
    return args


def _json(value: Any) -> Any:
    """A JSON argument sent as a string in a form (or already parsed); text stays text."""
    with contextlib.suppress(ValueError, TypeError):
        return json.loads(value)
    return value
