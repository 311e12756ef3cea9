"""The guard's yardstick: the bot's core job done the plain way, in one file.

Bolt's AsyncApp on aiohttp in HTTP mode (`/slack/events`): a `/gdocs` question is
acknowledged, sent to the Developer Knowledge server's answer_query through httpx (JSON-RPC
over Streamable HTTP, after one `initialize`), and the answer with its references posted
with chat.postMessage. Answers are kept in a dict; there is no store, no quota, no
verification. It reads the bot's own environment variable names (bench/guard.py sets them).

    python -m bench.naive_bot
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
from typing import Any

import httpx
from aiohttp import web
from slack_bolt.app.async_server import AsyncSlackAppServer
from slack_bolt.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

MCP_URL = os.environ["DEVELOPER_KNOWLEDGE_MCP_URL"]
PROTOCOL = "2025-06-18"

token = os.environ["SLACK_BOT_TOKEN"]
slack = AsyncWebClient(
    token=token, base_url=os.environ.get("SLACK_API_URL", "https://slack.com/api/")
)
app = AsyncApp(token=token, signing_secret=os.environ["SLACK_SIGNING_SECRET"], client=slack)
http = httpx.AsyncClient(
    timeout=60, headers={"X-Goog-Api-Key": os.environ.get("GOOGLE_API_KEY", "")}
)
ids = itertools.count(1)
answers: dict[str, str] = {}
session: dict[str, str] = {}
ready: asyncio.Future[None] | None = None


async def rpc(method: str, params: dict[str, Any], *, notify: bool = False) -> dict[str, Any]:
    body: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
    if not notify:
        body["id"] = next(ids)
    headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": PROTOCOL}
    headers |= session
    resp = await http.post(MCP_URL, json=body, headers=headers)
    resp.raise_for_status()
    if "mcp-session-id" in resp.headers:
        session["Mcp-Session-Id"] = resp.headers["mcp-session-id"]
    if notify:
        return {}
    if resp.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:] for line in resp.text.splitlines() if line.startswith("data:")]
        message = json.loads(data[-1])
    else:
        message = resp.json()
    if "error" in message:
        raise RuntimeError(message["error"].get("message", "MCP error"))
    return dict(message["result"])


async def initialize() -> None:
    info = {"name": "naive-bot", "version": "1"}
    await rpc("initialize", {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": info})
    await rpc("notifications/initialized", {}, notify=True)


async def answer(question: str) -> str:
    key = " ".join(question.lower().split())
    if key in answers:
        return answers[key]
    global ready
    if ready is None:
        ready = asyncio.ensure_future(initialize())
    await ready
    result = await rpc("tools/call", {"name": "answer_query", "arguments": {"query": question}})
    found = result.get("structuredContent") or json.loads(result["content"][0]["text"])
    links = "\n".join(f"• <https://{r.removeprefix('documents/')}>" for r in found["references"])
    answers[key] = text = f"{found['answerText']}\n\n{links}"
    return text


@app.command("/gdocs")
async def gdocs(ack: Any, command: dict[str, Any], client: AsyncWebClient) -> None:
    await ack(text="Looking it up…")
    try:
        text = await answer(command["text"])
    except Exception as exc:
        text = f"Sorry, that did not work: {exc}"
    await client.chat_postMessage(channel=command["channel_id"], text=text)


async def healthz(_: web.Request) -> web.Response:
    return web.Response(text="ok")


def main() -> None:
    port = int(os.environ.get("PORT", "3000"))
    server = AsyncSlackAppServer(
        port=port, path="/slack/events", app=app, host=os.environ.get("HOST")
    )
    server.web_app.router.add_get("/healthz", healthz)
    server.start()


if __name__ == "__main__":
    main()
