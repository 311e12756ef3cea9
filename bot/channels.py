"""Per-channel settings and the words of `/gdocs channel …` (pure), shared by the Slack side
and the renderer. `mode` auto: every top-level question answered in its thread."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Annotated, Literal

from pydantic import Field as Kept

from bot.models import Scope
from bot.products import ScopeError, scope_of

Mode = Literal["auto", "mentions"]
Followups = Literal["asker", "anyone", "off"]
Field = Literal["mode", "private", "followups", "products"]

#: a Slack user id (U…, or W… on Enterprise Grid)
USER_ID_RE = re.compile(r"[UW][A-Z0-9]{1,20}")
#: a Slack conversation id of a public (C…) or private (G…, or C… in newer workspaces) channel
CHANNEL_ID_RE = re.compile(r"[CG][A-Z0-9]{1,20}")
_FOLLOWUPS: tuple[Followups, ...] = ("asker", "anyone", "off")
_ON = frozenset({"on", "yes", "true"})
_OFF = frozenset({"off", "no", "false"})


@dataclass(frozen=True)
class ChannelSettings:
    mode: Mode = "mentions"
    private: bool = False
    #: None: the bot's THREAD_FOLLOWUPS setting applies in this channel
    followups: Followups | None = None
    #: the products its questions are limited to (`/gdocs channel products …`); (): all
    products: Scope = ()
    #: the installation it was saved under (OAuth mode; its uninstall deletes it): not a
    #: setting, and with one token ("") not stored, so kept records read as before
    workspace: Annotated[str, Kept(exclude_if=lambda kept: not kept)] = ""

    @property
    def is_default(self) -> bool:
        return replace(self, workspace="") == ChannelSettings()


@dataclass(frozen=True)
class ShowSettings:
    pass


@dataclass(frozen=True)
class ChangeSetting:
    field: Field
    mode: Mode | None = None
    private: bool | None = None
    followups: Followups | None = None
    products: Scope = ()

    def apply(self, settings: ChannelSettings) -> ChannelSettings:
        if self.field == "products":
            return replace(settings, products=self.products)
        if self.field == "mode" and self.mode is not None:
            return replace(settings, mode=self.mode)
        if self.field == "private" and self.private is not None:
            return replace(settings, private=self.private)
        # followups: a policy, or None (`default`): back to THREAD_FOLLOWUPS
        return replace(settings, followups=self.followups)


@dataclass(frozen=True)
class ChannelUsage:
    pass


@dataclass(frozen=True)
class UnknownProducts:
    """`channel products …` naming no scope (an unknown word, or too many)."""

    error: ScopeError


ChannelRequest = ShowSettings | ChangeSetting | ChannelUsage | UnknownProducts


def parse_channel_request(words: str) -> ChannelRequest:
    """What the words after `/gdocs channel` ask for."""
    tokens = words.lower().split()
    if not tokens:
        return ShowSettings()
    if tokens in (["auto"], ["mentions"]):
        return ChangeSetting("mode", mode="auto" if tokens[0] == "auto" else "mentions")
    if len(tokens) == 2 and tokens[0] == "private" and tokens[1] in _ON | _OFF:
        return ChangeSetting("private", private=tokens[1] in _ON)
    if len(tokens) > 1 and tokens[0] == "products":
        try:
            return ChangeSetting("products", products=scope_of(tokens[1:]))
        except ScopeError as error:
            return UnknownProducts(error)
    if len(tokens) == 2 and tokens[0] == "followups":
        if tokens[1] == "default":
            return ChangeSetting("followups", followups=None)
        for policy in _FOLLOWUPS:
            if tokens[1] == policy:
                return ChangeSetting("followups", followups=policy)
    return ChannelUsage()


def parse_channel_ids(text: str) -> frozenset[str]:
    """ANSWER_CHANNELS: comma- or space-separated ids; ValueError naming a bad one."""
    return _parse_ids(text, CHANNEL_ID_RE, "a channel id (like C0123ABCD)")


def parse_user_ids(text: str) -> frozenset[str]:
    """TEAM_ANSWERS_ADMINS: comma- or space-separated user ids; ValueError naming a bad one."""
    return _parse_ids(text, USER_ID_RE, "a user id (like U0123ABCD)")


def _parse_ids(text: str, pattern: re.Pattern[str], what: str) -> frozenset[str]:
    ids = [part.strip() for part in re.split(r"[,\s]+", text) if part.strip()]
    for found in ids:
        if not pattern.fullmatch(found):
            raise ValueError(f"not {what}: {found[:24]!r}")
    return frozenset(ids)
