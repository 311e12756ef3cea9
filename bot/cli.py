"""The `gdocs-bot` command line: ask, search, pay, doc, check, serve and feedback export.

Answers are printed as Markdown (or JSON with `--json`). Failures are one line on stderr:
exit 2 for usage and configuration errors (an empty question included), 1 for everything
that went wrong upstream; never a traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
from collections.abc import Sequence
from dataclasses import asdict
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from bot.errors import ConfigError, GdocsError, InvalidInput
from bot.models import Answer
from bot.names import normalize_doc_ref
from bot.render.notices import fallback_note
from bot.render.terminal import (
    CheckRow,
    answer_markdown,
    check_table,
    documents_markdown,
    quota_detail,
    quota_unknown_detail,
    store_detail,
)
from bot.settings import Settings, load_settings
from bot.store import ResilientStore, StoreConfigError, StoreError
from bot.text import terminal_safe

if TYPE_CHECKING:
    from bot.assembly import Core
    from bot.quota import QuotaState

logger = logging.getLogger("bot.cli")

#: a cheap search `check` runs to prove tool calls (not only tools/list) work
PROBE_QUERY = "Cloud Storage buckets"


def main(argv: list[str] | None = None) -> int:
    """Run one command; the process exit status."""
    try:
        return _run(argv)
    except KeyboardInterrupt:
        return 130
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
    sub.add_parser("ask", parents=[common], help="ask a question").add_argument(
        "words", nargs="+", metavar="QUESTION"
    )
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
    feedback = sub.add_parser("feedback", help="the votes people gave answers (an eval set)")
    actions = feedback.add_subparsers(dest="feedback_command", required=True, metavar="ACTION")
    export = actions.add_parser("export", help="print every vote as JSON Lines")
    export.add_argument("--since", metavar="YYYY-MM-DD", help="votes from this day (UTC) on")
    export.add_argument("--vote", metavar="up|down", help="only 👍 (up) or 👎 (down) votes")
    return parser


def _run(argv: list[str] | None) -> int:
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:  # argparse has printed usage (or --help)
        return exc.code if isinstance(exc.code, int) else 2
    try:
        settings = load_settings()
    except ConfigError as exc:
        for line in exc.message.splitlines():
            _fail(line)
        return 2
    if args.command == "serve":
        from bot.runtime import serve  # the Slack runtime and its imports only when serving

        return serve(settings)
    _configure_quiet_logging(settings)
    if args.command == "feedback":
        return _feedback_export(args, settings)
    if args.command != "check":
        problems = settings.google_problems()
        if problems:
            for problem in problems:
                _fail(problem)
            return 2
    try:
        return asyncio.run(_command(args, settings))
    except (InvalidInput, ConfigError, StoreConfigError) as exc:
        _fail(exc.message)
        return 2
    except GdocsError as exc:
        _fail(exc.message)
        return 1


def _configure_quiet_logging(settings: Settings) -> None:
    from bot.observability.logging import configure_logging

    configure_logging(settings)
    if settings.log_level != "DEBUG":  # a CLI shows its answer, not the service's chatter
        root = logging.getLogger()
        root.setLevel(max(logging.WARNING, root.level))
        # the client's warnings (quota spent…) reach the user as the answer's note already
        logging.getLogger("bot.upstream").setLevel(logging.ERROR)


async def _command(args: argparse.Namespace, settings: Settings) -> int:
    from bot.assembly import open_core

    as_json: bool = args.json
    if args.command == "doc":
        names = [normalize_doc_ref(ref) for ref in args.refs]  # refuse typos before any call
    async with open_core(settings) as core:
        service = core.service
        if args.command == "check":
            return await _check(core, as_json)
        if args.command == "doc":
            documents = await service.docs(names)
            dumped = [d.model_dump(mode="json") for d in documents]
            _out(_json(dumped) if as_json else documents_markdown(documents))
            return 0
        text = " ".join(args.words)
        if args.command == "ask":
            answer = await service.ask(text)
        elif args.command == "search":
            answer = await service.search(text)
        else:
            answer = await service.pay(text, args.language)
        now = datetime.now(UTC)
        _out(_json(_answer_json(answer, now)) if as_json else answer_markdown(answer, now=now))
        return 0


def _answer_json(answer: Answer, now: datetime) -> dict[str, object]:
    """The answer as JSON, with its note in words next to the structured fallback."""
    dumped = answer.model_dump(mode="json")
    dumped["note"] = fallback_note(answer.fallback, now=now) if answer.fallback else None
    return dumped


# --- feedback export -----------------------------------------------------------------------
def _feedback_export(args: argparse.Namespace, settings: Settings) -> int:
    """JSON Lines of the stored votes; exit 2 for a bad --since/--vote or STATE_URL, 1 when
    the store does not answer."""
    from bot.cli_feedback import export_filter, export_lines

    try:
        wanted = export_filter(args.since, args.vote)
        lines = asyncio.run(export_lines(settings, wanted))
    except (InvalidInput, StoreConfigError) as exc:
        _fail(exc.message)
        return 2
    except StoreError as exc:
        _fail(exc.message)
        return 1
    for line in lines:
        _out(line)
    return 0


# --- check --------------------------------------------------------------------------------
async def _check(core: Core, as_json: bool) -> int:
    service, settings = core.service, core.settings
    rows = [CheckRow("configuration", "ok", "settings loaded")]
    rows += [CheckRow("configuration", "FAIL", p) for p in settings.google_problems()]
    dk_status, pay_status = await service.status()
    dk_ok = dk_status.ok
    rows.append(_status_row("developer knowledge", dk_status.ok, dk_status.tools, dk_status.detail))
    if dk_ok:
        try:
            hits = (await service.search(PROBE_QUERY)).hits
            rows.append(CheckRow("dk search", "ok", f"{len(hits)} results for “{PROBE_QUERY}”"))
        except GdocsError as exc:
            dk_ok = False
            rows.append(CheckRow("dk search", "FAIL", exc.message))
    if service.pay_configured:
        rows.append(_status_row("google pay", pay_status.ok, pay_status.tools, pay_status.detail))
    else:
        rows.append(
            CheckRow(
                "google pay",
                "not configured",
                "optional: set GOOGLE_APPLICATION_CREDENTIALS and GOOGLE_CLOUD_PROJECT "
                "(needs roles/mcp.toolUser)",
            )
        )
    rows.append(await _slack_row(settings))
    store = await _store_report(core)
    rows.append(CheckRow("state store", "ok" if store["ok"] else "FAIL", store_detail(store)))
    now = datetime.now(UTC)
    quota = await _quota_state(core) if store["ok"] else None
    detail = quota_detail(quota, now=now) if quota is not None else quota_unknown_detail()
    rows.append(CheckRow("answer quota", "ok" if quota is not None else "FAIL", detail))
    ok = dk_ok and bool(store["ok"])
    if as_json:
        report = {
            "ok": ok,
            "checks": [asdict(r) for r in rows],
            "store": store,
            "quota": _quota_json(quota) if quota is not None else None,
        }
        _out(_json(report))
    else:
        _out(check_table(rows))
    return 0 if ok else 1


async def _store_report(core: Core) -> dict[str, object]:
    """The state store STATE_URL names: backend, URL (password hidden), whether it answers."""
    store = core.store
    if not isinstance(store, ResilientStore):  # memory://: nothing to reach
        return {"backend": store.kind, "url": f"{store.kind}://", "ok": True, "detail": "ok"}
    await store.ping()  # bounded, never raises: the outcome is in state()
    return store.state()


async def _quota_state(core: Core) -> QuotaState | None:
    """answer_query's ledger as the bot sees it (no upstream call); None when unreadable."""
    try:
        return await core.service.quota.state(None)
    except StoreError:
        return None


def _quota_json(state: QuotaState) -> dict[str, object]:
    pause = state.pause
    return {
        "per_minute": state.per_minute,
        "per_day": state.per_day,
        "per_user_per_day": state.per_user_per_day,
        "used_today": state.used_today,
        "left_today": state.left_today,
        "used_this_minute": state.used_this_minute,
        "left_this_minute": state.left_this_minute,
        "next_slot": state.next_slot.isoformat() if state.next_slot else None,
        "pause": {"kind": pause.kind, "until": pause.until.isoformat()} if pause else None,
        "next_reset": state.next_reset.isoformat(),
    }


def _status_row(name: str, ok: bool, tools: Sequence[str], detail: str) -> CheckRow:
    if not ok:
        return CheckRow(name, "FAIL", detail)
    return CheckRow(name, "ok", f"{len(tools)} tools: {', '.join(tools)} ({detail})")


async def _slack_row(settings: Settings) -> CheckRow:
    if settings.slack_bot_token is None:
        return CheckRow("slack", "not configured", "set SLACK_BOT_TOKEN to run the bot")
    import aiohttp
    from slack_sdk.errors import SlackApiError
    from slack_sdk.web.async_client import AsyncWebClient

    client = AsyncWebClient(
        token=settings.slack_bot_token.get_secret_value(),
        base_url=str(settings.slack_api_url),
        timeout=10,
    )
    try:
        async with asyncio.timeout(15):
            response = await client.auth_test()
    except SlackApiError as exc:
        error = exc.response.get("error", "error") if exc.response is not None else "error"
        return CheckRow("slack", "FAIL", f"auth.test: {error} — check SLACK_BOT_TOKEN")
    except (aiohttp.ClientError, TimeoutError, OSError):
        return CheckRow("slack", "FAIL", f"cannot reach {settings.slack_api_url} (SLACK_API_URL)")
    detail = f"team {response.get('team', '?')} as @{response.get('user', '?')}"
    problems = settings.slack_problems()
    if problems:
        return CheckRow("slack", "FAIL", f"{detail}; " + "; ".join(problems))
    return CheckRow("slack", "ok", detail)


# --- output -------------------------------------------------------------------------------
def _json(value: object) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)


def _out(text: str) -> None:
    print(terminal_safe(text))


def _fail(message: str) -> None:
    print(f"gdocs-bot: {terminal_safe(message)}", file=sys.stderr)
