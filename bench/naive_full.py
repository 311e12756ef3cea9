"""The guard's second yardstick: the bot's whole job for a `/gdocs` question, done the plain way.

bench/naive_bot.py answers with bare links and keeps nothing; the bot does more for each
question, and so does this one, in one file, with no machinery:
- the question is written to SQLite (WAL, `synchronous=NORMAL`, on the event loop) before the
  acknowledgement, so a crash cannot lose it, and deleted once answered;
- answer_query, then get_documents for the cited pages' titles (Developer Knowledge's MCP
  server through httpx, as bench/naive_bot.py);
- the answer with titled links posted with chat.postMessage, the acknowledgement's progress
  note deleted through Bolt's `respond`;
- answers cached in the same SQLite file.

    python -m bench.naive_full
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import sqlite3
import time
import uuid
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
db = sqlite3.connect("naive.db", isolation_level=None)
db.execute("PRAGMA journal_mode = WAL")
db.execute("PRAGMA synchronous = NORMAL")
db.execute("CREATE TABLE IF NOT EXISTS work (id TEXT PRIMARY KEY, body TEXT, at REAL)")
db.execute("CREATE TABLE IF NOT EXISTS answers (key TEXT PRIMARY KEY, text TEXT, at REAL)")
ids = itertools.count(1)
session: dict[str, str] = {}
ready: asyncio.Future[None] | None = None


async def rpc(method: str, params: dict[str, Any], *, notify: bool = False) -> dict[str, Any]:
    body: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
    if not notify:
        body["id"] = next(ids)
    headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": PROTOCOL}
    resp = await http.post(MCP_URL, json=body, headers=headers | session)
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


async def tool(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    global ready
    if ready is None:
        info = {"name": "naive-full", "version": "1"}
        params = {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": info}
        ready = asyncio.ensure_future(rpc("initialize", params))
    await ready
    result = await rpc("tools/call", {"name": name, "arguments": arguments})
    return dict(result.get("structuredContent") or json.loads(result["content"][0]["text"]))


async def answer(question: str) -> str:
    key = " ".join(question.lower().split())
    row = db.execute("SELECT text FROM answers WHERE key = ?", (key,)).fetchone()
    if row:
        return str(row[0])
    found = await tool("answer_query", {"query": question})
    docs = await tool("get_documents", {"names": found["references"]})
    links = "\n".join(f"• <{d['uri']}|{d['title']}>" for d in docs["documents"])
    text = f"{found['answerText']}\n\n*Sources*\n{links}"
    db.execute("INSERT OR REPLACE INTO answers VALUES (?, ?, ?)", (key, text, time.time()))
    return text


@app.command("/gdocs")
async def gdocs(ack: Any, respond: Any, command: dict[str, Any], client: AsyncWebClient) -> None:
    work = uuid.uuid4().hex
    db.execute("INSERT INTO work VALUES (?, ?, ?)", (work, json.dumps(command), time.time()))
    await ack(text="Looking it up…")
    try:
        text = await answer(command["text"])
    except Exception as exc:
        text = f"Sorry, that did not work: {exc}"
    await client.chat_postMessage(channel=command["channel_id"], text=text)
    await respond(delete_original=True)
    db.execute("DELETE FROM work WHERE id = ?", (work,))


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
