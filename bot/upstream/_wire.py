"""Reading one JSON-RPC answer out of an HTTP response, bounded in bytes.

The answer is an `application/json` body or a `text/event-stream` whose events carry JSON-RPC
messages: notifications, pings and server requests are skipped, the response whose `id`
matches ours is taken. Nothing is read past `limit` bytes: a declared Content-Length over it
is refused before the body, and streamed bodies are counted chunk by chunk.
"""

from __future__ import annotations

import json
from typing import Any

import httpx

from bot.text import one_line
from bot.upstream._errors import ServerContext
from bot.upstream._sse import SSEParser


async def read_limited(
    response: httpx.Response, limit: int, server: ServerContext, *, truncate: bool = False
) -> bytes:
    """The body, at most `limit` bytes: cut there (`truncate`) or refused (ProtocolError)."""
    declared = response.headers.get("content-length", "")
    if not truncate and declared.isdigit() and int(declared) > limit:
        raise _too_large(server, limit)
    buffer = bytearray()
    async for chunk in response.aiter_bytes():
        buffer += chunk
        if len(buffer) > limit:
            if truncate:
                return bytes(buffer[:limit])
            raise _too_large(server, limit)
    return bytes(buffer)


async def read_message(
    response: httpx.Response, request_id: int, limit: int, server: ServerContext
) -> dict[str, Any]:
    """The JSON-RPC response to `request_id` from a 2xx answer."""
    content_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
    if content_type == "application/json" or content_type.endswith("+json"):
        raw = await read_limited(response, limit, server)
        try:
            data = json.loads(raw)
        except ValueError:
            raise server.protocol("malformed JSON") from None
        message = _pick(data, request_id)
        if message is None:
            raise server.protocol("no response to the request")
        return message
    if content_type == "text/event-stream":
        return await _read_event_stream(response, request_id, limit, server)
    raise server.protocol(f"content type {one_line(content_type, 60) or 'missing'}")


async def _read_event_stream(
    response: httpx.Response, request_id: int, limit: int, server: ServerContext
) -> dict[str, Any]:
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise _too_large(server, limit)
    parser = SSEParser()
    total = 0
    async for chunk in response.aiter_bytes():
        total += len(chunk)
        if total > limit:
            raise _too_large(server, limit)
        for event in parser.feed(chunk):
            try:
                data = json.loads(event.data)
            except ValueError:
                raise server.protocol("malformed JSON in the event stream") from None
            message = _pick(data, request_id)
            if message is not None:
                return message
    raise server.protocol("the event stream ended before the answer")


def _pick(data: object, request_id: int) -> dict[str, Any] | None:
    """The response to our request in a message or batch; None for anything else."""
    candidates = data if isinstance(data, list) else [data]
    for item in candidates:
        if not isinstance(item, dict) or "method" in item:
            continue  # notifications and server-to-client requests (pings)
        if "result" not in item and "error" not in item:
            continue
        rid = item.get("id")
        # an error with a null id is the server saying it could not read our request
        if rid in (request_id, str(request_id)) or (rid is None and "error" in item):
            return item
    return None


def tool_payload(result: dict[str, Any], server: ServerContext, tool: str) -> Any:
    """The structured output of a tools/call result, or the typed error it reports."""
    content = result.get("content")
    blocks = content if isinstance(content, list) else []
    texts = [
        b["text"]
        for b in blocks
        if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
    ]
    if result.get("isError") is True:
        raise server.from_tool_error(" ".join(texts), tool=tool)
    structured = result.get("structuredContent")
    if isinstance(structured, dict):
        return structured
    if not texts:
        raise server.protocol(f"{tool} returned no content")
    try:
        return json.loads("".join(texts))
    except ValueError:
        raise server.protocol(f"{tool} returned text that is not JSON") from None


def _too_large(server: ServerContext, limit: int) -> Exception:
    return server.protocol(f"the answer is larger than {limit:,} bytes")
