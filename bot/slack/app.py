"""The Bolt app (Web API client, deduplication, the listeners), its HTTP route, and the
recovery loop that finishes work a stopped process had acknowledged."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import ClientSession, TCPConnector, web
from slack_bolt.adapter.aiohttp import to_aiohttp_response
from slack_bolt.async_app import AsyncApp, AsyncBoltContext, AsyncBoltRequest
from slack_bolt.response import BoltResponse
from slack_sdk.web.async_client import AsyncWebClient

from bot import tenant
from bot.render import AUTHORIZE_FAILED, NOT_INSTALLED
from bot.settings import reveal
from bot.slack import guests, identity, oauth
from bot.slack.boundary import duplicate
from bot.slack.delivery.posting import OnceAck, retry_handlers
from bot.slack.deps import SlackDeps
from bot.slack.listeners import actions, commands, drafts, events, retry, team
from bot.slack.listeners.actions import handle_doc_click, is_doc_click
from bot.slack.listeners.commands import handle_command, handle_shortcut
from bot.slack.listeners.events import handle_question
from bot.slack.memory import delivery_key
from bot.slack.work.worklog import WorkRecord
from bot.store import StoreError

logger = logging.getLogger(__name__)

#: Web API calls (chat.postMessage, files upload) give up after this long, retries aside
WEB_API_TIMEOUT_SECONDS = 30


_NOT_INSTALLED_LOG = "a request from a workspace with no installation here: not answered"


class _NoRequestBodies(logging.Filter):
    """Bolt logs request bodies (user text) for a bad signature or an unhandled request, and
    the redirect's `code` (anyone's text, newlines too) when oauth.v2.access refuses it; its
    ERROR for a workspace not installed, at every event, is a WARNING that says so plainly."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno > logging.DEBUG:
            message = record.getMessage()
            for prefix in ("Invalid request signature detected", "Unhandled request"):
                if message.startswith(prefix):
                    record.msg, record.args = f"{prefix} (body not logged)", None
            if message.startswith("Failed to fetch oauth.v2.access result with code: "):
                error = message.rpartition(" - error: ")[2]  # Slack's answer, after the code
                record.msg, record.args = "an install's oauth.v2.access failed: %s", (error,)
            if message.startswith("Although the app should be installed into this workspace"):
                # OAuth mode: not installed through /slack/install, or its record unreadable
                record.msg, record.args = _NOT_INSTALLED_LOG, None
                record.levelno, record.levelname = logging.WARNING, "WARNING"
        return True


def build_web_client(token: str | None, api_url: str) -> AsyncWebClient:
    """The bot's Web API client, retrying 429, 500/503 and connection errors; in a running
    loop with one pooled session (closed by its owner), also for `response_url` posts."""
    session = None
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass  # built outside a loop (a test): slack_sdk makes a session per call
    else:
        session = ClientSession(connector=TCPConnector(limit=256))
    return AsyncWebClient(
        token=token,
        base_url=api_url,
        timeout=WEB_API_TIMEOUT_SECONDS,
        retry_handlers=retry_handlers(),
        session=session,
    )


def claims_with_its_record(body: dict[str, Any]) -> bool:
    """Whether the listener claims this delivery with its work record (`WorkLog.accept`)."""
    if isinstance(body.get("command"), str) or body.get("type") == "message_action":
        return True
    event = body.get("event")
    if isinstance(event, dict):
        return event.get("type") in ("app_mention", "message")
    return body.get("type") == "block_actions" and (is_doc_click(body) or retry.is_try_again(body))


def build_bolt_app(deps: SlackDeps, client: AsyncWebClient) -> AsyncApp:
    """The Bolt app with every listener registered. Building it makes no Slack call."""
    bolt_logger = logging.getLogger("bot.slack.bolt")
    if not any(isinstance(f, _NoRequestBodies) for f in bolt_logger.filters):
        bolt_logger.addFilter(_NoRequestBodies())
    installs = deps.installs  # OAuth mode: a token per installation, from the store
    app = AsyncApp(
        logger=bolt_logger,
        name="gdocs-bot",
        client=client,  # one token: Bolt's single-team authorization (auth.test once)
        oauth_settings=(
            oauth.oauth_settings(deps.settings, installs, client, bolt_logger) if installs else None
        ),
        signing_secret=reveal(deps.settings.slack_signing_secret) or "",
        # Socket Mode requests are not signed (Bolt skips them anyway)
        request_verification_enabled=not deps.settings.socket_mode,
        # listeners ack and hand their work to deps.inflight themselves: with False, Bolt
        # would poll every 10 ms for the ack (a 10 ms floor under every acknowledgement)
        process_before_response=True,
        user_facing_authorize_error_message=NOT_INSTALLED if installs else AUTHORIZE_FAILED,
    )

    async def for_its_installation(
        context: AsyncBoltContext, next_: Callable[[], Awaitable[None]]
    ) -> None:
        if deps.settings.oauth_mode:  # what it saves is kept apart from other installs'
            home = identity.install(context)
            tenant.enter(tenant.install_key(home.team, home.org, home.org_wide))
        await next_()

    async def drop_repeated_deliveries(
        body: dict[str, Any], next_: Callable[[], Awaitable[None]]
    ) -> BoltResponse | None:
        key = delivery_key(body)
        if key is None or claims_with_its_record(body):
            await next_()  # a message the listener ignores needs no claim
            return None
        if not await deps.work.claim(key):
            duplicate(deps.metrics)
            return BoltResponse(status=200, body="")
        await next_()  # the listener records its work (under this claim) and acks
        return None

    app.use(for_its_installation)
    app.use(guests.refusing_guests(deps))  # commands, shortcuts, clicks; events: events.py
    app.use(drop_repeated_deliveries)
    oauth.register(app, deps)  # uninstalls (OAuth mode)
    for listeners in (commands, events, retry, drafts, team, actions):  # actions: catch-all last
        listeners.register(app, deps)
    return app


EVENTS_PATH = "/slack/events"
_CHUNK = 64 * 1024


def slack_events_route(app: AsyncApp, *, max_body_bytes: int = 1_000_000) -> web.RouteDef:
    """`web.post("/slack/events", …)` serving `app`. Before Bolt checks the signature: a body over
    the cap is a 413 (unread), one not UTF-8 or not parseable a 400, a bad timestamp a 401."""

    async def slack_events(request: web.Request) -> web.StreamResponse:
        body = await _read_capped(request, max_body_bytes)
        if body is None:
            return web.json_response({"error": "request body too large"}, status=413)
        timestamp = request.headers.get("X-Slack-Request-Timestamp", "")
        if timestamp and not timestamp.strip().isdigit():
            return web.json_response({"error": "invalid request"}, status=401)
        headers: Any = request.headers
        try:
            text = body.decode("utf-8")
            bolt_request = AsyncBoltRequest(body=text, query=request.query_string, headers=headers)
        except (ValueError, TypeError, AttributeError, KeyError, IndexError):
            bolt_request = None  # not UTF-8, not JSON/form, or a shape Bolt cannot read
        if bolt_request is None or not isinstance(bolt_request.body, dict):
            return web.json_response({"error": "malformed request"}, status=400)
        return await to_aiohttp_response(await app.async_dispatch(bolt_request))

    return web.post(EVENTS_PATH, slack_events)


async def _read_capped(request: web.Request, limit: int) -> bytes | None:
    """The body, or None once it is longer than `limit` (checked before reading it all)."""
    if request.content_length is not None and request.content_length > limit:
        return None
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = await request.content.read(_CHUNK)
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)


# --- recovery: work whose lease expired is taken over (one taker among replicas)
async def resume(deps: SlackDeps, client: AsyncWebClient, record: WorkRecord) -> None:
    """Finish taken-over work as its listener would have, with the restart note."""
    payload = dict(record.payload)
    if time.time() - record.accepted_at > 30 * 60:  # Slack no longer takes its response_url
        payload["response_url"] = None
    logger.info(
        "finishing work a stopped process had accepted",
        extra={"work_id": record.id, "kind": record.kind, "takeovers": record.takeovers},
    )
    if record.kind == "command":  # acknowledged long since
        await handle_command(deps, client, payload, OnceAck(None), record=record, resumed=True)
    elif record.kind in ("mention", "dm", "thread", "auto"):
        event: dict[str, Any] = payload.get("event") or {}
        if not isinstance(event.get("channel"), str) or not isinstance(event.get("ts"), str):
            await deps.work.drop(record, "unreadable")
            return
        bot_user_id = payload.get("bot_user_id")
        await handle_question(
            deps, client, event, bot_user_id, kind=record.kind, record=record, resumed=True
        )
    elif record.kind == "shortcut":
        await handle_shortcut(deps, client, payload, record=record, resumed=True)
    elif record.kind == "action":
        await handle_doc_click(deps, client, payload, record=record, resumed=True)
    else:  # written by a newer version: leave nothing behind
        await deps.work.drop(record, "unknown_kind")


async def _resume_installed(deps: SlackDeps, client: AsyncWebClient, record: WorkRecord) -> None:
    """`resume` as its installation, with its token (OAuth mode); dropped once uninstalled."""
    if not deps.settings.oauth_mode:
        await resume(deps, client, record)
        return
    key = record.payload.get("tenant")
    own = await oauth.client_for(deps, client, key) if isinstance(key, str) and key else None
    if own is None:
        await deps.work.drop(record, "uninstalled")
        return
    with tenant.running_for(str(key)):
        await resume(deps, own, record)


async def run_recovery(deps: SlackDeps, client: AsyncWebClient) -> None:
    """Forever (cancelled at shutdown): leases renewed every third of their length, orphans
    looked for every WORK_RECOVERY_SECONDS, the first time at once."""
    renew_every = deps.work.lease_seconds / 3
    scan_every = deps.settings.work_recovery_seconds
    next_scan = 0.0
    loop = asyncio.get_running_loop()
    while True:
        try:
            await deps.work.renew_all()
            if loop.time() >= next_scan and deps.inflight.accepting:
                for record in await deps.work.claim_orphans():
                    deps.inflight.spawn(_resume_installed(deps, client, record))
                next_scan = loop.time() + scan_every
        except StoreError as exc:  # a raw store failing: try again next round
            logger.info("work recovery skipped a round: %s", exc.message)
        await asyncio.sleep(min(renew_every, scan_every))
