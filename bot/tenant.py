"""Which installation a request is for (OAuth mode: one bot serving several workspaces or
Grid organisations). What one installation saves — team answers, channel settings, what
users.info said through its token — is kept apart from another's by this key: "" with one
token (SLACK_BOT_TOKEN, the default), else the installation's id: the enterprise id of an
org-wide install, otherwise the team id.

Set once per request by the Slack app (and by the recovery loop for resumed work); asyncio
tasks copy it, so work spawned for a request keeps its installation."""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager

_TENANT: contextvars.ContextVar[str] = contextvars.ContextVar("tenant", default="")


def current() -> str:
    """The installation this code runs for ("" with one token, and outside Slack)."""
    return _TENANT.get()


def enter(tenant: str) -> None:
    """From here on in this task (and the tasks it starts), work is for `tenant`."""
    _TENANT.set(tenant)


@contextmanager
def running_for(tenant: str) -> Iterator[None]:
    """`enter(tenant)` for a block (tests, the recovery loop), then back."""
    token = _TENANT.set(tenant)
    try:
        yield
    finally:
        _TENANT.reset(token)


def scoped(key: str) -> str:
    """`key` as it is with one token, else this installation's own (`profile:W1@T2`)."""
    return f"{key}@{t}" if (t := current()) else key


def install_key(team_id: str | None, enterprise_id: str | None, org_wide: bool) -> str:
    """An installation's id: its enterprise for an org-wide install, else its team."""
    return (enterprise_id if org_wide else team_id) or ""
