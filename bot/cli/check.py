"""`gdocs-bot check`: the configuration, both servers (Developer Knowledge by the backend in
use, MCP or REST, with one cheap search), Slack, the state store and where the team stands with
answer_query — without an answer_query call."""

from __future__ import annotations

import asyncio
import json
from contextlib import suppress
from dataclasses import asdict
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from bot.errors import GdocsError
from bot.models import ServerStatus
from bot.redact import redact_url
from bot.render import (
    CheckRow,
    check_table,
    missing_tools_detail,
    quota_detail,
    quota_unknown_detail,
    store_detail,
)
from bot.serving.health import operator_detail
from bot.settings import Settings, reveal
from bot.store import StoreError
from bot.upstream import GoogleDocsService, missing_tools

if TYPE_CHECKING:
    from bot.quota import QuotaState
    from bot.serving.assembly import Core

#: a cheap search proves tool calls (not only tools/list) work
PROBE_QUERY = "Cloud Storage buckets"
_DK = "developer knowledge"


async def run_check(core: Core, as_json: bool) -> tuple[int, str]:
    """The check rows (or JSON) to print, and the exit status: 0 when all is usable."""
    settings = core.settings
    rows = [CheckRow("configuration", "ok", "settings loaded")]
    rows += [CheckRow("configuration", "FAIL", p) for p in settings.google_problems()]
    dk_ok = await _server_rows(core.service, rows)
    rows.append(await (_installs_row(core) if settings.oauth_mode else _slack_row(settings)))
    store = await _store_report(core)
    status = "not yet" if store.get("missing") else "ok" if store["ok"] else "FAIL"
    rows.append(CheckRow("state store", status, store_detail(store)))
    quota: QuotaState | None = None
    if store["ok"]:
        with suppress(StoreError):  # answer_query's ledger, no upstream call; None: unreadable
            quota = await core.service.quota.state(None)
    detail = quota_detail(quota, now=datetime.now(UTC)) if quota else quota_unknown_detail()
    rows.append(CheckRow("answer quota", "ok" if quota is not None else "FAIL", detail))
    ok = dk_ok and bool(store["ok"])
    if as_json:
        report = {
            "ok": ok,
            "backend": core.service.backend,
            "checks": [asdict(r) for r in rows],
            "store": store,
            "quota": _quota_json(quota) if quota is not None else None,
        }
        return (0 if ok else 1), json.dumps(report, indent=2, ensure_ascii=False)
    return (0 if ok else 1), check_table(rows)


async def _server_rows(service: GoogleDocsService, rows: list[CheckRow]) -> bool:
    """Both servers' rows and a probe search; whether Developer Knowledge is usable."""
    dk, pay = await service.status()
    # REST has no tool list to miss: its status is one GET (bot/upstream/_service.py)
    missing = missing_tools(dk.tools) if dk.ok and service.backend == "mcp" else ()
    if missing:
        rows.append(CheckRow(_DK, "FAIL", missing_tools_detail(missing, dk.tools)))
    else:
        rows.append(_status_row(_DK, dk))
    dk_ok = dk.ok and not missing
    if dk_ok:
        try:
            hits = (await service.search(PROBE_QUERY)).hits
            found = f"{len(hits)} result{'' if len(hits) == 1 else 's'} for “{PROBE_QUERY}”"
            rows.append(CheckRow("dk search", "ok", found))
        except GdocsError as exc:
            dk_ok = False
            rows.append(CheckRow("dk search", "FAIL", operator_detail(exc)))
    if service.pay_configured:
        rows.append(_status_row("google pay", pay))
    else:
        hint = "optional: set GOOGLE_APPLICATION_CREDENTIALS and GOOGLE_CLOUD_PROJECT"
        rows.append(CheckRow("google pay", "not configured", f"{hint} (needs roles/mcp.toolUser)"))
    return dk_ok


async def _store_report(core: Core) -> dict[str, object]:
    if core.state_file_missing:  # a look is no reason to create the bot's state file
        url = redact_url(core.settings.state_url.get_secret_value())
        return {"backend": "sqlite", "url": url, "ok": True, "detail": "no file", "missing": True}
    await core.store.ping()  # bounded, never raises: the outcome is in state()
    return core.store.state()


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


def _status_row(name: str, status: ServerStatus) -> CheckRow:
    detail, tools = status.detail, status.tools
    if status.error is not None:
        detail = operator_detail(status.error, status.url)
    if not status.ok:
        return CheckRow(name, "FAIL", detail)
    if detail.startswith("REST"):
        return CheckRow(
            name, "ok", f"{detail} answers at {status.url} (DEVELOPER_KNOWLEDGE_API=rest)"
        )
    return CheckRow(name, "ok", f"{len(tools)} tools: {', '.join(tools)} ({detail})")


async def _installs_row(core: Core) -> CheckRow:
    """OAuth mode: no one token to test; how many workspaces (or Grid orgs) installed it."""
    from bot.slack.installs import StoreInstallations, TokenCipher

    settings = core.settings
    mode = f"OAuth installs (SLACK_CLIENT_ID={settings.slack_client_id})"
    problems = settings.slack_problems()
    if problems:
        return CheckRow("slack", "FAIL", f"{mode}; " + "; ".join(problems))
    cipher = TokenCipher.from_setting(reveal(settings.slack_token_encryption_key) or "")
    try:
        installs = StoreInstallations(core.store, cipher)
        count, opened = await installs.count_opened()
    except StoreError as exc:
        return CheckRow("slack", "FAIL", f"{mode}; cannot count the installations: {exc.message}")
    if opened < count:  # a key dropped from SLACK_TOKEN_ENCRYPTION_KEY: those are not answered
        unread = f"{count - opened} of {count} installs open with none of its keys"
        return CheckRow("slack", "FAIL", f"{mode}; SLACK_TOKEN_ENCRYPTION_KEY: {unread}")
    return CheckRow("slack", "ok", f"{mode}: {count} installed (workspaces or Grid orgs)")


async def _slack_row(settings: Settings) -> CheckRow:
    token, api_url = reveal(settings.slack_bot_token), str(settings.slack_api_url)
    if token is None:
        return CheckRow("slack", "not configured", "set SLACK_BOT_TOKEN to run the bot")
    from slack_sdk.errors import SlackApiError
    from slack_sdk.web.async_client import AsyncWebClient

    from bot.slack import SLACK_UNREACHABLE

    client = AsyncWebClient(token=token, base_url=api_url, timeout=10)
    try:
        async with asyncio.timeout(15):
            response = await client.auth_test()
    except SlackApiError as exc:
        error = exc.response.get("error", "error") if exc.response is not None else "error"
        return CheckRow("slack", "FAIL", f"auth.test: {error} — check SLACK_BOT_TOKEN")
    except SLACK_UNREACHABLE:
        return CheckRow("slack", "FAIL", f"cannot reach {api_url} (SLACK_API_URL)")
    detail = f"team {response.get('team', '?')} as @{response.get('user', '?')}"
    problems = settings.slack_problems()
    if problems:
        return CheckRow("slack", "FAIL", f"{detail}; " + "; ".join(problems))
    return CheckRow("slack", "ok", detail)
