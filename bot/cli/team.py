"""`gdocs-bot team export|import`: the team answers (drafts included) as JSON Lines, to move
them between deployments. Both read the store STATE_URL names without per-process fallback:
a store that does not answer is an error (exit 1), never an empty export or a lost import.
And the team's answer `gdocs-bot ask` gives before Google's docs."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ValidationError

from bot.errors import InvalidInput
from bot.models import Answer
from bot.render import answer_from_team, error_sentence
from bot.settings import Settings
from bot.store import Store, StoreError
from bot.team import TeamAnswer, TeamAnswers
from bot.text import one_line, terminal_safe, truncate

if TYPE_CHECKING:
    from bot.serving.assembly import Core

#: a line longer than this is not one team answer (8,000 chars of answer, escaped, and more)
MAX_LINE_CHARS = 200_000
#: the skipped lines the summary names one by one
SHOWN_SKIPS = 20


def add_team_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    team = sub.add_parser("team", help="the team's saved answers, to move between deployments")
    actions = team.add_subparsers(dest="team_command", required=True, metavar="ACTION")
    export = actions.add_parser("export", help="print every team answer and draft as JSON Lines")
    export.add_argument("--out", metavar="FILE", help="write them here, not to stdout")
    imported = actions.add_parser("import", help="save the team answers a JSON Lines file holds")
    imported.add_argument("file", metavar="FILE", help="what `team export` wrote; - for stdin")


def run_team(args: argparse.Namespace, settings: Settings) -> int:
    from bot.cli.commands import _require_state_file, out_file, write

    if args.team_command == "export":
        out = out_file(args.out)
        _require_state_file(settings, "export")
        return write(asyncio.run(_export(settings)), out)
    lines = _read(args.file)
    print(terminal_safe(asyncio.run(_import(settings, lines))))
    return 0


async def team_answer(core: Core, text: str) -> Answer | None:
    """The workspace's team answer to `text` (outside Slack no channel sees the others), as
    the Slack flow gives it: checked against the Google pages it links to (none: no marks,
    no call). None: Google's docs are asked."""
    found = await core.team.find(text, None)
    if found is None:
        return None
    answer = answer_from_team(found, text, datetime.now(UTC))
    return await core.service.verify(answer) if answer.references else answer


def _read(name: str) -> list[str]:
    if name == "-":
        return sys.stdin.read().splitlines()
    try:
        return Path(name).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
        raise InvalidInput(f"cannot read {name[:80]}: {why or type(exc).__name__}") from None


def _team(settings: Settings, store: Store) -> TeamAnswers:
    return TeamAnswers(store, settings.team_answer_review_days, lambda: datetime.now(UTC))


async def _export(settings: Settings) -> str:
    from bot.serving.assembly import open_state

    async with open_state(settings) as store:
        # every installation's (a record names its own, which import keeps)
        answers = await _team(settings, store).all(every_workspace=True)
    return "".join(
        json.dumps(a.model_dump(mode="json"), ensure_ascii=True, separators=(",", ":")) + "\n"
        for a in answers
    )


async def _import(settings: Settings, lines: list[str]) -> str:
    """Each line saved, or skipped with one short sentence; the summary line."""
    from bot.serving.assembly import open_state

    saved, skipped = 0, []
    async with open_state(settings) as store:
        team = _team(settings, store)
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                await team.save(_parsed(line))
            except InvalidInput as exc:
                said = error_sentence(exc) if exc.facts else exc.message
                skipped.append(f"line {number}: {truncate(one_line(said), 160).rstrip('.')}")
            except StoreError as exc:  # the store stopped answering: what is done is done
                raise StoreError(f"{exc.message} (after importing {_count(saved)})") from None
            else:
                saved += 1
    if not skipped:
        return f"Imported {_count(saved)}"
    shown = "; ".join(skipped[:SHOWN_SKIPS]) + ("; …" if len(skipped) > SHOWN_SKIPS else "")
    return f"Imported {_count(saved)} ({len(skipped)} skipped: {shown})"


def _parsed(line: str) -> TeamAnswer:
    """One exported team answer; InvalidInput in a few words when it is not one."""
    if len(line) > MAX_LINE_CHARS:
        raise InvalidInput(f"longer than {MAX_LINE_CHARS:,} characters")
    try:
        return TeamAnswer.model_validate_json(line)
    except ValidationError as exc:
        first = exc.errors(include_url=False, include_input=False)[0]
        if first["type"] == "json_invalid":
            raise InvalidInput("not a JSON object") from None
        where = ".".join(str(part) for part in first["loc"]) or "the line"
        raise InvalidInput(f"{where}: {first['msg']}") from None


def _count(saved: int) -> str:
    return f"{saved} team answer" + ("" if saved == 1 else "s")
