"""Who is asking and for which installation, read from a Slack payload (pure: no I/O).

Slack says the asker's workspace in different places per payload: an event's `user_team`
(in a Slack Connect channel; it may be an enterprise id E… for someone from a Grid
organisation) or `team`, an interaction's `user.team_id`, a command's `team_id`. The
installation's own workspace and organisation come from Bolt's authorization (auth.test for
one token, the installation store in OAuth mode)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from slack_bolt.async_app import AsyncBoltContext


@dataclass(frozen=True)
class Asker:
    user: str | None
    #: the asker's workspace (T…), when the payload says it
    team: str | None
    #: the asker's Grid organisation (E…), when the payload says it
    org: str | None


@dataclass(frozen=True)
class Install:
    """The installation a request came through."""

    team: str | None
    org: str | None
    #: installed org-wide on Enterprise Grid: one token for every workspace of `org`
    org_wide: bool = False


def asker(body: dict[str, Any]) -> Asker:
    event = body.get("event")
    ids: tuple[object, ...]
    if isinstance(event, dict):
        user, ids = event.get("user"), (event.get("user_team"), event.get("team"))
    elif isinstance(body.get("user"), dict):  # block actions, shortcuts, view submissions
        user, ids = body["user"].get("id"), (body["user"].get("team_id"),)
    else:  # a slash command
        user, ids = body.get("user_id"), (body.get("team_id"),)
    found = next((i for i in ids if isinstance(i, str) and i), None)
    user = user if isinstance(user, str) and user else None
    if found is not None and found.startswith("E"):
        return Asker(user, None, found)
    return Asker(user, found, None)


def install(context: AsyncBoltContext) -> Install:
    """From Bolt's authorization only (the payload's ids, without one): on an org-wide
    install's click (`team: null`) Bolt's context.team_id is the clicker's own workspace."""
    found = context.authorize_result or context
    return Install(found.team_id, found.enterprise_id, bool(context.is_enterprise_install))


def is_guest(who: Asker, home: Install) -> bool | None:
    """True: from another organisation; False: a member (or nothing says otherwise); None:
    a workspace the payload cannot place (on Grid: ask Slack which organisation it is in)."""
    if who.team is None and who.org is None:
        return False
    if home.org:
        if who.org is not None:
            return who.org != home.org
        return False if who.team == home.team else None
    return who.org is not None or who.team != home.team


def asker_workspace(body: dict[str, Any]) -> str | None:
    """The asker's workspace (T…): a stream's `recipient_team_id`. On Grid an event may name
    the organisation instead; then the workspace the event happened in."""
    who = asker(body)
    if who.team is not None:
        return who.team
    event = body.get("event")
    event = event if isinstance(event, dict) else {}
    for found in (event.get("team"), body.get("context_team_id"), body.get("team_id")):
        if isinstance(found, str) and found.startswith("T"):
            return found
    return None
