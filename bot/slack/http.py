"""POST /slack/events on aiohttp. Bolt checks the signature; before it, a body over the cap
is a 413 (unread), one that is not UTF-8 or not parseable a 400, a timestamp that is not a
number a 401: none of it reaches a listener, none is a 500."""

from __future__ import annotations

import logging

from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response
from slack_bolt.async_app import AsyncApp, AsyncBoltRequest

logger = logging.getLogger(__name__)

EVENTS_PATH = "/slack/events"
_CHUNK = 64 * 1024


def slack_events_route(app: AsyncApp, *, max_body_bytes: int = 1_000_000) -> web.RouteDef:
    """`web.post("/slack/events", …)` serving `app`; add it with `application.add_routes([...])`.

    The aiohttp Application's own `client_max_size` should be at least `max_body_bytes`.
    """

    async def slack_events(request: web.Request) -> web.StreamResponse:
        body = await _read_capped(request, max_body_bytes)
        if body is None:
            return web.json_response({"error": "request body too large"}, status=413)
        timestamp = request.headers.get("X-Slack-Request-Timestamp", "")
        if timestamp and not timestamp.strip().isdigit():
            return web.json_response({"error": "invalid request"}, status=401)
        try:
            text = body.decode("utf-8")
            bolt_request = AsyncBoltRequest(
                body=text,
                query=request.query_string,
                headers=request.headers,  # type: ignore[arg-type]
            )
        except (ValueError, TypeError, AttributeError, KeyError, IndexError):
            # not UTF-8, not JSON/form, or a shape Bolt cannot read: not from Slack
            return web.json_response({"error": "malformed request"}, status=400)
        if not isinstance(bolt_request.body, dict):
            return web.json_response({"error": "malformed request"}, status=400)
        bolt_response = await app.async_dispatch(bolt_request)
        return await to_aiohttp_response(bolt_response)

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
