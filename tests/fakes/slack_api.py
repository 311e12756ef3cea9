"""A recording fake of Slack's Web API (aiohttp), served on loopback.

Point the bot at it with `SLACK_API_URL=<fake.url>`. Every call is recorded with its parsed
arguments; every `blocks` list is validated with `slack_sdk.models.blocks` and Slack's
size limits, so an invalid payload fails the test instead of passing silently. Errors and
rate limits are scripted per method (`fake.fail("chat.postMessage", "not_in_channel")`).
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web
from slack_sdk.models.blocks import Block

from tests.fakes.serving import ThreadedServer

MAX_BLOCKS = 50
MAX_TEXT = 40_000
BOT_USER_ID = "UBOT"
BOT_ID = "BBOT"


@dataclass
class SlackCall:
    method: str
    args: dict[str, Any]
    headers: dict[str, str]
    #: what the fake answered (e.g. the `ts` of a posted message)
    result: dict[str, Any] = field(default_factory=dict)


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
    #: whether auth.test succeeds
    auth_ok: bool = True
    #: ws:// URL handed out by apps.connections.open (Socket Mode tests)
    socket_url: str | None = None
    invalid_payloads: list[str] = field(default_factory=list)
    #: JSON bodies POSTed to response URLs (`fake.response_url(key)`), as (key, body)
    responses: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
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
        problem = _validate(message)
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
        problem = _validate(args)
        if problem:
            self.invalid_payloads.append(f"{method}: {problem}")
        # the answer is decided before the call is published, so a test that waited for the
        # call can read `call.result`
        status, resp_headers = 200, {}
        scripted = self._scripts.get(method)
        if scripted:
            step = scripted.popleft()
            resp_headers = {"Retry-After": str(step.retry_after)} if step.retry_after else {}
            status, call.result = step.status, {"ok": False, "error": step.error}
        elif problem:
            call.result = {"ok": False, "error": "invalid_blocks", "detail": problem}
        else:
            call.result = self._answer(method, args)
        with self._cond:
            self.calls.append(call)
            self._cond.notify_all()
        return web.json_response(call.result, status=status, headers=resp_headers)

    async def _handle_response_url(self, request: web.Request) -> web.Response:
        """Like Slack's response_url: JSON in, validated like a message, plain `ok` out."""
        try:
            body = await request.json()
        except ValueError:
            body = None
        if not isinstance(body, dict):
            self.invalid_payloads.append("response_url: body is not a JSON object")
            return web.Response(status=400, text="invalid_payload")
        problem = _validate(body)
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
        if method in ("chat.postMessage", "chat.postEphemeral", "chat.update"):
            return {
                "ok": True,
                "channel": args.get("channel"),
                "ts": args.get("ts") or ts,
                "message_ts": ts,
            }
        if method == "users.info":
            user = args.get("user", "")
            return {"ok": True, "user": {"id": user, "locale": self.locales.get(user, "en-US")}}
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


def _validate(args: dict[str, Any]) -> str | None:
    """What Slack would refuse about this payload, or None."""
    blocks = args.get("blocks")
    if isinstance(blocks, str):
        try:
            blocks = json.loads(blocks)
        except ValueError:
            return "blocks is not JSON"
    text = args.get("text")
    if blocks is not None:
        if not isinstance(blocks, list):
            return "blocks is not a list"
        if len(blocks) > MAX_BLOCKS:
            return f"{len(blocks)} blocks (max {MAX_BLOCKS})"
        if not text:
            return "blocks sent without a text fallback"
        markdown_total = 0
        for raw in blocks:
            try:
                block = Block.parse(raw)
                if block is None:
                    return f"unknown block {raw!r:.80}"
                block.validate_json()
            except Exception as exc:
                return f"invalid block: {exc}"
            if raw.get("type") == "markdown":
                markdown_total += len(raw.get("text", ""))
        if markdown_total > 12_000:
            return f"markdown blocks total {markdown_total} chars (max 12000)"
    if isinstance(text, str) and len(text) > MAX_TEXT:
        return f"text of {len(text)} chars"
    return None
