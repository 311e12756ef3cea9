"""A recording fake of Slack's Socket Mode WebSocket server (aiohttp), served on loopback.

Pair it with the fake Web API: `slack.socket_url = socket.url`, so `apps.connections.open`
hands the bot this server. On each connection it sends Slack's `hello`; the test pushes
envelopes (`send_slash_command`, `send`), reads the bot's acknowledgements (`wait_for_ack`),
and drops the connection (`close_current`) or asks for a refresh (`send_disconnect`) to see
the bot reconnect. Protocol: slack_sdk.socket_mode (envelope_id, payload, type; the ack is
`{"envelope_id": ...}` with an optional `payload`).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import threading
from typing import Any

from aiohttp import WSMsgType, web

from tests.fakes.serving import ThreadedServer
from tests.fakes.slack_payloads import slash_command_form

_ids = itertools.count(1)


class FakeSocketMode:
    """Accepts WebSocket connections at /link and records what the bot sends back."""

    def __init__(self) -> None:
        self.connections = 0
        #: every JSON message the bot sent, in order
        self.received: list[dict[str, Any]] = []
        self._cond = threading.Condition()
        self._current: web.WebSocketResponse | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        app = web.Application()
        app.router.add_get("/link", self._handle)
        self._server = ThreadedServer(app)

    # --- serving -------------------------------------------------------------------------
    def start(self) -> FakeSocketMode:
        self._server.start()
        return self

    def stop(self) -> None:
        if self._current is not None and self._loop is not None:
            asyncio.run_coroutine_threadsafe(self._current.close(), self._loop).result(5)
        self._server.stop()

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self._server.port}/link?ticket=t"

    async def _handle(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(autoping=True)
        await ws.prepare(request)
        self._loop = asyncio.get_running_loop()
        with self._cond:
            self.connections += 1
            self._current = ws
            self._cond.notify_all()
        await ws.send_json(
            {
                "type": "hello",
                "num_connections": 1,
                "debug_info": {"host": "fake", "approximate_connection_time": 3600},
                "connection_info": {"app_id": "A1"},
            }
        )
        async for message in ws:
            if message.type == WSMsgType.TEXT:
                data = json.loads(message.data)
                with self._cond:
                    self.received.append(data)
                    self._cond.notify_all()
        return ws

    # --- driving -------------------------------------------------------------------------
    def _run(self, coro: Any) -> Any:
        assert self._loop is not None, "no connection yet"
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(5)

    def send(self, envelope: dict[str, Any]) -> None:
        """Push one message to the bot over the current connection."""
        assert self._current is not None, "no connection yet"
        self._run(self._current.send_json(envelope))

    def send_slash_command(self, text: str, response_url: str, **fields: str) -> str:
        """A `/gdocs` slash command envelope; returns its envelope_id."""
        envelope_id = f"env-{next(_ids)}"
        payload = slash_command_form(text, response_url=response_url, **fields)
        payload["trigger_id"] = f"{envelope_id}.trigger"
        self.send(
            {
                "envelope_id": envelope_id,
                "type": "slash_commands",
                "accepts_response_payload": True,
                "payload": payload,
            }
        )
        return envelope_id

    def send_event(self, event: dict[str, Any]) -> str:
        """An `events_api` envelope carrying `event` (an app_mention, …); its envelope_id."""
        envelope_id = f"env-{next(_ids)}"
        payload = {
            "token": "deprecated-verification-token",
            "team_id": "T1",
            "api_app_id": "A1",
            "type": "event_callback",
            "event_id": f"Ev-{envelope_id}",
            "event_time": 1710000000,
            "event": event,
        }
        self.send(
            {
                "envelope_id": envelope_id,
                "type": "events_api",
                "accepts_response_payload": False,
                "payload": payload,
            }
        )
        return envelope_id

    def send_disconnect(self, reason: str = "refresh_requested") -> None:
        self.send({"type": "disconnect", "reason": reason, "debug_info": {"host": "fake"}})

    def close_current(self) -> None:
        """Drop the current connection from the server side, as Slack does now and then."""
        assert self._current is not None, "no connection yet"
        self._run(self._current.close())

    # --- waiting -------------------------------------------------------------------------
    def wait_for_connections(self, count: int, timeout: float = 10.0) -> None:
        with self._cond:
            ok = self._cond.wait_for(lambda: self.connections >= count, timeout)
        if not ok:
            raise AssertionError(
                f"expected {count} connections within {timeout}s; saw {self.connections}"
            )

    def wait_for_ack(self, envelope_id: str, timeout: float = 10.0) -> dict[str, Any]:
        def find() -> dict[str, Any] | None:
            return next((m for m in self.received if m.get("envelope_id") == envelope_id), None)

        with self._cond:
            self._cond.wait_for(lambda: find() is not None, timeout)
            ack = find()
        if ack is None:
            raise AssertionError(f"no ack for {envelope_id} within {timeout}s; got {self.received}")
        return ack
