"""Slack's text streaming, for the recording fake (`tests/fakes/slack_api.py`):
`chat.startStream` returns the new message's `ts`; `chat.appendStream` and `chat.stopStream`
work only while that stream is open; chunks are checked with slack_sdk's models
(`slack_sdk.models.messages.chunk`) and Slack's documented limits; in a channel (not a DM)
the stream needs its human recipient. Failures are switchable: a refused start, a stream
that expires after a number of appends, a start that waits for the test, a Slack that takes
no empty `sources` list.

A task is updated by sending its id again (../shared/reference/slack.md): `Stream.task_view`
shows it as the playground draws it — a field sent replaces the one shown, `details`
accumulate, a field not sent stays. Slack does not document an empty `sources` list (slack_sdk
never writes one: its models drop empty arrays): here it clears the chips, and
`refuse_empty_sources` plays a Slack that refuses it instead.
"""

from __future__ import annotations

import json
import threading
import warnings
from dataclasses import dataclass, field
from typing import Any

from slack_sdk.models.blocks.block_elements import UrlSourceElement
from slack_sdk.models.messages.chunk import (
    BlocksChunk,
    Chunk,
    MarkdownTextChunk,
    TaskUpdateChunk,
)

from tests.fakes.slack_checks import MAX_MESSAGE_BLOCKS, Refusal, check_blocks

STREAM_METHODS = ("chat.startStream", "chat.appendStream", "chat.stopStream")
#: markdown_text per call
MAX_APPEND_CHARS = 12_000
#: Slack's guidance for task titles, details and outputs
MAX_TASK_CHARS = 256
_TASK_STATUSES = ("pending", "in_progress", "complete", "error")
_SESSION_STATUSES = ("active", "processing", "suspended", "closed")


@dataclass
class Stream:
    """One streamed message as Slack holds it."""

    ts: str
    channel: str
    thread_ts: str
    recipient_user_id: str | None
    task_display_mode: str | None
    #: every chunk sent, in order (start's, appends', stop's)
    chunks: list[dict[str, Any]] = field(default_factory=list)
    mode: str | None = None  # "chunks" or "text", from the first call
    open: bool = True
    appends: int = 0
    #: chat.stopStream's blocks and session_status, once stopped by the app
    final_blocks: list[dict[str, Any]] | None = None
    session_status: str | None = None

    def tasks(self) -> list[tuple[str, str, str]]:
        """(id, title, status) of every task_update, in order."""
        return [
            (c["id"], c["title"], c["status"]) for c in self.chunks if c["type"] == "task_update"
        ]

    def task_view(self) -> dict[str, dict[str, Any]]:
        """Each task by id as it shows now: every update merged over the last."""
        shown: dict[str, dict[str, Any]] = {}
        for chunk in self.chunks:
            if chunk["type"] == "task_update":
                task = shown.setdefault(chunk["id"], {})
                details = task.get("details", "") + chunk.get("details", "")
                task.update(chunk, **({"details": details} if details else {}))
        return shown

    def blocks(self) -> list[dict[str, Any]]:
        """The blocks of every `blocks` chunk, in order."""
        return [b for c in self.chunks if c["type"] == "blocks" for b in c["blocks"]]

    def text(self) -> str:
        """All markdown_text streamed, joined."""
        return "".join(c["text"] for c in self.chunks if c["type"] == "markdown_text")


@dataclass
class Streams:
    """The fake's streams, by ts, and its switchable failures."""

    by_ts: dict[str, Stream] = field(default_factory=dict)
    #: the next chat.startStream answers this error
    refuse_start: str | None = None
    #: a stream closes itself (as Slack's lifetime does) after this many appends
    expire_after_appends: int | None = None
    #: chat.startStream waits until this is set (a slow start, for Stop tests)
    start_gate: threading.Event | None = None
    #: chat.startStream calls waiting at the gate
    waiting_at_gate: int = 0
    #: refuse a task_update whose `sources` is an empty list (invalid_chunks)
    refuse_empty_sources: bool = False

    def all(self) -> list[Stream]:
        return list(self.by_ts.values())

    def check(self, method: str, args: dict[str, Any]) -> Refusal | None:
        """What Slack would refuse about a streaming call, or None."""
        if not _present(args, "channel"):
            return _arguments("missing required field: channel")
        has_text, has_chunks = args.get("markdown_text") is not None, "chunks" in args
        if has_text and has_chunks:
            return Refusal("cannot_provide_both_markdown_text_and_chunks", "both given")
        if has_text and len(str(args["markdown_text"])) > MAX_APPEND_CHARS:
            return Refusal("msg_too_long", f"markdown_text of {len(args['markdown_text'])}")
        problem = _check_chunks(_json(args.get("chunks"))) if has_chunks else None
        if problem:
            return Refusal("invalid_chunks", problem)
        if has_chunks and self.refuse_empty_sources and _empty_sources(_json(args["chunks"])):
            return Refusal("invalid_chunks", "task_update sources is an empty array")
        if method == "chat.startStream":
            return _check_start(args)
        if not _present(args, "ts"):
            return _arguments("missing required field: ts")
        if method == "chat.stopStream":
            return _check_stop(args)
        if not (has_text or has_chunks):
            return _arguments("markdown_text or chunks is required")
        return None

    def answer(self, method: str, args: dict[str, Any], ts: str) -> dict[str, Any]:
        """Slack's answer to a streaming call that passed `check`."""
        if method == "chat.startStream":
            if self.refuse_start:
                return {"ok": False, "error": self.refuse_start}
            stream = Stream(
                ts, args["channel"], args["thread_ts"], args.get("recipient_user_id"),
                args.get("task_display_mode"),
            )  # fmt: skip
            self.by_ts[ts] = stream
            return self._take(stream, args) or {"ok": True, "channel": stream.channel, "ts": ts}
        found = self.by_ts.get(args["ts"])
        if found is None or found.channel != args["channel"]:
            return {"ok": False, "error": "message_not_found"}
        if not found.open:
            return {"ok": False, "error": "message_not_in_streaming_state"}
        if method == "chat.appendStream":
            found.appends += 1
            if self.expire_after_appends is not None and found.appends > self.expire_after_appends:
                found.open = False
                return {"ok": False, "error": "message_not_in_streaming_state"}
        refused = self._take(found, args)
        if refused:
            return refused
        if method == "chat.stopStream":
            found.open = False
            found.final_blocks = _json(args.get("blocks")) or []
            found.session_status = args.get("session_status") or "active"
        return {"ok": True, "channel": found.channel, "ts": found.ts}

    def _take(self, stream: Stream, args: dict[str, Any]) -> dict[str, Any] | None:
        """Record the call's chunks (text as a markdown_text chunk); an error on a mode mix."""
        if args.get("markdown_text") is not None:
            mode, chunks = "text", [{"type": "markdown_text", "text": args["markdown_text"]}]
        elif "chunks" in args:
            mode, chunks = "chunks", list(_json(args["chunks"]))
        else:
            return None
        if stream.mode not in (None, mode):
            return {"ok": False, "error": "streaming_mode_mismatch"}
        stream.mode = stream.mode or mode
        stream.chunks.extend(chunks)
        return None

    def conflict(self, method: str, args: dict[str, Any]) -> str | None:
        """chat.update of a message still streaming: Slack's error."""
        found = self.by_ts.get(str(args.get("ts")))
        if method == "chat.update" and found is not None and found.open:
            return "streaming_state_conflict"
        return None


def check_session_status(args: dict[str, Any]) -> Refusal | None:
    """agents.sessions.setStatus: a channel and one of the four statuses, never free text."""
    if not _present(args, "channel_id"):
        return _arguments("missing required field: channel_id")
    if args.get("status") not in _SESSION_STATUSES:
        return _arguments(f"status {args.get('status')!r} is not one of {_SESSION_STATUSES}")
    return None


def _check_start(args: dict[str, Any]) -> Refusal | None:
    if not _present(args, "thread_ts"):
        return _arguments("missing required field: thread_ts")
    if not str(args["channel"]).startswith("D"):  # a channel: the human asker is required
        if not _present(args, "recipient_user_id"):
            return Refusal("missing_recipient_user_id", "a stream in a channel needs it")
        if not _present(args, "recipient_team_id"):
            return Refusal("missing_recipient_team_id", "a stream in a channel needs it")
    mode = args.get("task_display_mode")
    if mode is not None and mode not in ("timeline", "plan"):
        return _arguments(f"task_display_mode {mode!r}")
    return None


def _check_stop(args: dict[str, Any]) -> Refusal | None:
    if args.get("blocks") is not None:
        problem = check_blocks(args["blocks"], max_blocks=MAX_MESSAGE_BLOCKS)
        if problem:
            return Refusal("invalid_blocks", problem)
    status = args.get("session_status")
    if status is not None and status not in _SESSION_STATUSES:
        return _arguments(f"session_status {status!r}")
    return None


def _check_chunks(chunks: Any) -> str | None:
    if not isinstance(chunks, list) or not chunks:
        return "chunks must be a non-empty list"
    text = 0
    for raw in chunks:
        problem = _check_chunk(raw)
        if problem:
            return problem
        if raw["type"] == "markdown_text":
            text += len(raw["text"])
    return f"markdown_text chunks of {text} chars in one call" if text > MAX_APPEND_CHARS else None


def _check_chunk(raw: Any) -> str | None:
    if not isinstance(raw, dict):
        return f"chunk is not an object: {raw!r:.80}"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # an unknown field is a mistake here
            chunk = Chunk.parse(raw)
            if chunk is None:
                return f"unknown chunk {raw!r:.80}"
            chunk.to_dict()
    except Exception as exc:
        return f"invalid chunk: {exc}"
    if isinstance(chunk, MarkdownTextChunk):
        return None if isinstance(chunk.text, str) and chunk.text else "empty markdown_text"
    if isinstance(chunk, TaskUpdateChunk):
        return _check_task(chunk)
    if isinstance(chunk, BlocksChunk):
        return check_blocks(raw.get("blocks"), max_blocks=MAX_MESSAGE_BLOCKS)
    return None


def _check_task(chunk: TaskUpdateChunk) -> str | None:
    if not (isinstance(chunk.id, str) and chunk.id and isinstance(chunk.title, str)):
        return "task_update needs an id and a title"
    if chunk.status not in _TASK_STATUSES:
        return f"task_update status {chunk.status!r}"
    for name in ("title", "details", "output"):
        value = getattr(chunk, name)
        if value is not None and (not isinstance(value, str) or len(value) > MAX_TASK_CHARS):
            return f"task_update {name} over {MAX_TASK_CHARS} characters"
    for source in chunk.sources or []:
        if not isinstance(source, dict) or source.get("type") != "url":
            return f"task source is not a url element: {source!r:.80}"
        fields = {k: v for k, v in source.items() if k != "type"}
        UrlSourceElement(**fields).to_dict()
        if not str(source.get("url", "")).startswith(("https://", "http://")):
            return f"task source url {source.get('url')!r:.80}"
    return None


def _empty_sources(chunks: list[dict[str, Any]]) -> bool:
    return any(c.get("type") == "task_update" and c.get("sources") == [] for c in chunks)


def _present(args: dict[str, Any], name: str) -> bool:
    value = args.get(name)
    return isinstance(value, str) and bool(value.strip())


def _arguments(detail: str) -> Refusal:
    return Refusal("invalid_arguments", f"[ERROR] {detail}")


def _json(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value
