"""The `gdocs-bot` command line. Answers are printed as Markdown (or JSON with `--json`).
A failure is one line on stderr, never a traceback: exit 2 for usage and configuration
errors (an empty question included), 1 for what went wrong upstream or in the store."""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import logging
import re
import sys
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from bot.cli.team import add_team_parser, run_team, team_answer
from bot.errors import ConfigError, GdocsError, InvalidInput
from bot.feedback import VoteKind, export_object
from bot.models import Answer
from bot.names import normalize_doc_ref
from bot.quota import pacific_day
from bot.render import answer_markdown, documents_markdown, fallback_note, team_words
from bot.settings import Settings, load_settings
from bot.store import StoreConfigError, StoreError, state_file
from bot.text import terminal_safe

if TYPE_CHECKING:
    from bot.report import Window

logger = logging.getLogger("bot.cli")

#: commands that read or cache but record nothing the bot needs later
_LOOK_ONLY = frozenset({"check", "search", "pay", "doc"})
#: a report's days unless --since says
REPORT_DAYS = 7
_DATE_RE = re.compile(r"\d{4}-\d{2}-\d{2}")
_VOTES: dict[str, VoteKind] = {"up": "up", "down": "down"}


def main(argv: list[str] | None = None) -> int:
    """Run one command; the process exit status."""
    try:
        return _run(argv)
    except KeyboardInterrupt:
        return 130
    except (InvalidInput, ConfigError, StoreConfigError) as exc:
        _fail(_said(exc))
        return 2
    except (GdocsError, StoreError) as exc:
        _fail(_said(exc))
        return 1
    except Exception:  # the top-level boundary: a user never sees a traceback
        logger.debug("unexpected error", exc_info=True)
        _fail("unexpected error (set LOG_LEVEL=DEBUG to see the details)")
        return 1


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gdocs-bot",
        description="Answers from Google's developer documentation, in Slack or here.",
    )
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    # --json also after the subcommand; SUPPRESS keeps it from resetting the one given before
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--json", action="store_true", default=argparse.SUPPRESS)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    ask = sub.add_parser("ask", parents=[common], help="ask a question")
    ask.add_argument("words", nargs="+", metavar="QUESTION")
    ask.add_argument("--no-team", action="store_true", help="skip the team's saved answers")
    sub.add_parser("search", parents=[common], help="search the docs").add_argument(
        "words", nargs="+", metavar="QUERY"
    )
    pay = sub.add_parser("pay", parents=[common], help="search Google Pay & Wallet docs")
    pay.add_argument("words", nargs="+", metavar="QUERY")
    pay.add_argument("--language", metavar="xx-YY", help="BCP-47 language, such as it-IT")
    sub.add_parser("doc", parents=[common], help="print whole documents").add_argument(
        "refs", nargs="+", metavar="NAME|URL"
    )
    sub.add_parser("check", parents=[common], help="check the configuration and servers")
    sub.add_parser("serve", help="run the Slack bot")
    playground = sub.add_parser("playground", help="try the bot in a local web page, no Slack app")
    playground.add_argument("--port", type=int, default=3100, metavar="N", help="default 3100")
    feedback = sub.add_parser("feedback", help="the votes people gave answers (an eval set)")
    actions = feedback.add_subparsers(dest="feedback_command", required=True, metavar="ACTION")
    export = actions.add_parser("export", help="print every vote as JSON Lines")
    export.add_argument("--since", metavar="YYYY-MM-DD", help="votes from this day (UTC) on")
    export.add_argument("--vote", metavar="up|down", help="only 👍 (up) or 👎 (down) votes")
    report = sub.add_parser("report", help="what the team asks and where the docs fall short")
    report.add_argument("--since", metavar="YYYY-MM-DD", help="from this Pacific day on")
    report.add_argument("--until", metavar="YYYY-MM-DD", help="up to this Pacific day")
    report.add_argument("--format", metavar="md|json|html", help="md (default), json, html")
    report.add_argument("--out", metavar="FILE", help="write the report here, not to stdout")
    report.add_argument("--by-channel", action="store_true", help="answers per channel id")
    add_team_parser(sub)
    return parser


def _run(argv: list[str] | None) -> int:
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:  # argparse has printed usage (or --help)
        return exc.code if isinstance(exc.code, int) else 2
    if args.command != "serve":  # serve turns it on once it listens (see bot.cli)
        gc.enable()
    settings = load_settings()
    if args.command == "serve":
        from bot.serving.runtime import serve  # the Slack runtime and its imports only when serving

        return serve(settings)
    if args.command == "playground":
        from bot.playground import run  # the page and its server only when asked for

        return run(settings, args.port)
    from bot.observability.logging import configure_logging

    configure_logging(settings)
    if settings.log_level != "DEBUG":  # a CLI shows its answer, not the service's chatter
        root = logging.getLogger()
        root.setLevel(max(logging.WARNING, root.level))
        # the client's warnings (quota spent…) reach the user as the answer's note already
        logging.getLogger("bot.upstream").setLevel(logging.ERROR)
    if args.command in ("feedback", "report"):
        return _stored(args, settings)
    if args.command == "team":
        return run_team(args, settings)
    problems = settings.google_problems() if args.command != "check" else []
    for problem in problems:
        _fail(problem)
    return 2 if problems else asyncio.run(_command(args, settings))


async def _command(args: argparse.Namespace, settings: Settings) -> int:
    from bot.cli.check import run_check
    from bot.serving.assembly import open_core

    as_json: bool = args.json
    if args.command == "doc":
        names = [normalize_doc_ref(ref) for ref in args.refs]  # refuse typos before any call
    # a command that only looks does not create the bot's state file (`ask` records quota)
    async with open_core(settings, create_state_file=args.command not in _LOOK_ONLY) as core:
        service = core.service
        if args.command == "check":
            status, report = await run_check(core, as_json)
            _out(report)
            return status
        if args.command == "doc":
            documents = await service.docs(names)
            dumped = [d.model_dump(mode="json") for d in documents]
            _out(_json(dumped) if as_json else documents_markdown(documents))
            return 0
        text = " ".join(args.words)
        if args.command == "ask":
            answer = None if args.no_team else await team_answer(core, text)
            answer = answer or await service.verify(await service.ask(text))
        elif args.command == "search":
            answer = await service.search(text)
        else:
            answer = await service.pay(text, args.language)
        now = datetime.now(UTC)
        _out(_json(_answer_json(answer, now)) if as_json else _answer_text(answer, now))
        return 0


def _answer_text(answer: Answer, now: datetime) -> str:
    said = answer_markdown(answer, now=now)
    return f"{team_words(answer.team)}\n\n{said}" if answer.team else said


def _answer_json(answer: Answer, now: datetime) -> dict[str, object]:
    """The answer as JSON, with its note in words next to the structured fallback."""
    dumped = answer.model_dump(mode="json")
    dumped["note"] = fallback_note(answer.fallback, now=now) if answer.fallback else None
    return dumped


def _stored(args: argparse.Namespace, settings: Settings) -> int:
    """`feedback export` and `report`: what the bot recorded (in the store STATE_URL names, as
    `serve` does), never calling Slack or Google; a store that does not answer is exit 1."""
    if args.command == "feedback":
        sys.stdout.write(asyncio.run(_export_votes(settings, args.since, args.vote)))
        return 0
    fmt = (args.format or "md").strip().lower()
    if fmt not in ("md", "json", "html"):
        raise InvalidInput(f"--format takes md, json or html, not {(args.format or '')[:40]!r}")
    last = _day("--until", args.until) or date.fromisoformat(pacific_day(datetime.now(UTC)))
    first = _day("--since", args.since) or last - timedelta(days=REPORT_DAYS - 1)
    if first > last:
        raise InvalidInput(f"--since ({first}) is after --until ({last})")
    from bot.report import MAX_WINDOW_DAYS, Window

    if (last - first).days + 1 > MAX_WINDOW_DAYS:
        raise InvalidInput(f"a report covers at most {MAX_WINDOW_DAYS} days")
    out = out_file(args.out)
    _require_state_file(settings, "report")
    return write(asyncio.run(_report(settings, Window(first, last), fmt, args.by_channel)), out)


def out_file(out: str | None) -> Path | None:
    """The file `--out` names (a directory refused before any work); None: stdout."""
    if out and Path(out).is_dir():
        raise InvalidInput(f"--out names a directory, not a file: {out[:80]}")
    return Path(out) if out else None


def write(text: str, out: Path | None) -> int:
    """`text` on stdout or in `out`; 1 (said) when that file cannot be written."""
    if out is None:
        sys.stdout.write(terminal_safe(text))
        return 0
    try:
        out.write_text(text, encoding="utf-8")
    except OSError as exc:
        _fail(f"cannot write {out}: {exc.strerror or type(exc).__name__}")
        return 1
    return 0


def _require_state_file(settings: Settings, what: str) -> None:
    """A missing SQLite file is said, not created (as `check` does): opening it would make an
    empty store and a report of zeros, hiding a wrong folder or STATE_URL."""
    path = state_file(settings.state_url.get_secret_value())
    if path is not None and not path.exists():
        raise StoreError(
            f"no state file yet at {path}, so nothing to {what}: "
            "`serve` creates it (STATE_URL says where)"
        )


def _day(option: str, text: str | None) -> date | None:
    if text is None:
        return None
    try:
        if not _DATE_RE.fullmatch(text.strip()):
            raise ValueError(text)
        return date.fromisoformat(text.strip())
    except ValueError:
        raise InvalidInput(f"{option} takes a date as YYYY-MM-DD, not {text[:40]!r}") from None


async def _export_votes(settings: Settings, since: str | None, vote: str | None) -> str:
    """Every vote `--since` and `--vote` keep as JSON Lines, oldest first (the eval set), never
    who voted; non-ASCII as escapes, so nothing reaches a terminal as a control sequence."""
    day = _day("--since", since)
    start = datetime.combine(day, time(0), tzinfo=UTC) if day else None  # whole UTC days
    kind = None if vote is None else _VOTES.get(vote.strip().lower())
    if vote is not None and kind is None:
        raise InvalidInput(f"--vote takes up or down, not {vote[:40]!r}")
    _require_state_file(settings, "export")
    from bot.serving.assembly import feedback_log, open_state

    async with open_state(settings) as store:
        votes = await feedback_log(settings, store).votes()
    return "".join(
        json.dumps(export_object(v), ensure_ascii=True, separators=(",", ":")) + "\n"
        for v in votes
        if (start is None or v.time >= start) and (kind is None or v.vote == kind)
    )


async def _report(settings: Settings, window: Window, fmt: str, by_channel: bool) -> str:
    from bot.report import aggregate, collect, render_html, render_json, render_md
    from bot.serving.assembly import open_state

    async with open_state(settings) as store:
        collected = await collect(store)
    per_day = settings.answer_quota_per_day
    report = aggregate(collected, window, quota_per_day=per_day, by_channel=by_channel)
    if fmt == "json":
        return render_json(report) + "\n"
    return render_html(report) if fmt == "html" else render_md(report)


def _json(value: object) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)


def _out(text: str) -> None:
    print(terminal_safe(text))


def _said(exc: GdocsError | StoreError) -> str:
    """The sentence for a failure, as an operator needs it: an unreachable server names the
    setting holding its URL (`operator_detail`; else `error_sentence`, people's words)."""
    if not isinstance(exc, GdocsError):
        return exc.message
    from bot.serving.health import operator_detail  # the failure path only

    return operator_detail(exc)


def _fail(message: str) -> None:
    for line in message.splitlines() or [""]:
        print(f"gdocs-bot: {terminal_safe(line)}", file=sys.stderr)
