"""An incremental Server-Sent Events parser: feed it bytes as they arrive, get whole events.

Follows the WHATWG event-stream rules that matter for MCP: lines end in CRLF, LF or CR;
`data:` lines of one event are joined with newlines; a blank line dispatches; `:` lines are
comments (keep-alives); an event left incomplete when the stream ends is dropped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_EOL = re.compile(rb"[\r\n]")


@dataclass(frozen=True)
class SSEEvent:
    event: str
    data: str
    id: str | None = None


class SSEParser:
    def __init__(self) -> None:
        self._buffer = bytearray()
        self._data: list[str] = []
        self._event = ""
        self._id: str | None = None

    @property
    def pending(self) -> bool:
        """True when bytes or data lines of an undispatched event are waiting."""
        return bool(self._buffer.strip()) or bool(self._data)

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        self._buffer += chunk
        events: list[SSEEvent] = []
        while True:
            match = _EOL.search(self._buffer)
            if match is None:
                break
            idx = match.start()
            if self._buffer[idx] == 0x0D:  # CR: maybe the first half of a CRLF split by chunks
                if idx + 1 == len(self._buffer):
                    break
                end = idx + 2 if self._buffer[idx + 1] == 0x0A else idx + 1
            else:
                end = idx + 1
            line = bytes(self._buffer[:idx]).decode("utf-8", errors="replace")
            del self._buffer[:end]
            event = self._line(line)
            if event is not None:
                events.append(event)
        return events

    def _line(self, line: str) -> SSEEvent | None:
        if not line:
            return self._dispatch()
        if line.startswith(":"):
            return None
        field, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if field == "data":
            self._data.append(value)
        elif field == "event":
            self._event = value
        elif field == "id" and "\0" not in value:
            self._id = value
        return None

    def _dispatch(self) -> SSEEvent | None:
        if not self._data:
            self._event = ""
            return None
        event = SSEEvent(event=self._event or "message", data="\n".join(self._data), id=self._id)
        self._data = []
        self._event = ""
        return event
