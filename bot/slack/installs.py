"""Installations in OAuth mode (one bot serving several workspaces or Grid organisations):
slack-sdk's installation store and OAuth state store, backed by our Store.

Each installation is one record under keys.INSTALL, the whole record (token, team name…)
encrypted with SLACK_TOKEN_ENCRYPTION_KEY, so neither SQLite nor Redis holds a token in
plain text. Reads and writes go to a ResilientStore's primary: a token kept in one replica's
per-process stand-in during a Redis outage would be lost, or served stale, by the others."""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import secrets
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from slack_bolt.error import BoltError
from slack_sdk.oauth.installation_store.async_installation_store import AsyncInstallationStore
from slack_sdk.oauth.installation_store.models.bot import Bot
from slack_sdk.oauth.installation_store.models.installation import Installation
from slack_sdk.oauth.state_store.async_state_store import AsyncOAuthStateStore

from bot import keys
from bot.errors import ConfigError
from bot.settings import encryption_key_problem
from bot.store import TEXT, Store, StoreError, on_primary
from bot.tenant import install_key

logger = logging.getLogger(__name__)

#: "until uninstalled": a TTL no installation outlives (keys.INSTALL is never evicted)
INSTALL_TTL_SECONDS = 10 * 365 * 86_400
#: installations kept at most; a new one past it is refused (Bolt shows its failure page)
MAX_INSTALLATIONS = 10_000


class TokenCipher:
    """Fernet encryption of installation records. Several keys (comma-separated): the first
    encrypts, all decrypt, so a key can be rotated without losing the installs."""

    def __init__(self, keys_: list[bytes]) -> None:
        self._first = Fernet(keys_[0])
        self._fernet = MultiFernet([Fernet(k) for k in keys_])
        self._warned = False

    @classmethod
    def from_setting(cls, value: str) -> TokenCipher:
        """The cipher SLACK_TOKEN_ENCRYPTION_KEY names; ConfigError (never echoing it) else."""
        problem = encryption_key_problem(value)
        if problem is not None:
            raise ConfigError(message=problem)
        return cls([k.strip().encode() for k in value.split(",") if k.strip()])

    def encrypt(self, data: bytes) -> bytes:
        return self._fernet.encrypt(data)

    def rotated(self, data: bytes) -> bytes | None:
        """`data` (which a configured key opens) sealed again under the first key; None when
        it is already."""
        try:
            self._first.decrypt(data)
        except InvalidToken:
            return self._fernet.rotate(data)
        return None

    def decrypt(self, data: bytes) -> bytes | None:
        """`data` opened, or None when no configured key opens it (a key that was dropped)."""
        try:
            return self._fernet.decrypt(data)
        except InvalidToken:
            # once at WARNING: every event from that workspace would repeat it
            logger.log(
                logging.DEBUG if self._warned else logging.WARNING,
                "an installation record opens with none of SLACK_TOKEN_ENCRYPTION_KEY's keys "
                "(while rotating, keep the old key after the new one)",
            )
            self._warned = True
            return None


class _Raw:
    """The stored bytes as they are (encryption is done around the store, not in it)."""

    def encode(self, value: bytes) -> bytes:
        return value

    def decode(self, raw: bytes) -> bytes:
        return raw


_RAW = _Raw()


class InstallRefused(BoltError):
    """An installation could not be kept: Bolt's OAuth flow shows its failure page."""


def _record(bot: Bot, installer: str | None) -> bytes:
    fields = bot.to_dict_for_copying()
    for name, value in fields.items():  # datetimes as ISO strings, which Bot() reads back
        if isinstance(value, datetime):
            fields[name] = value.isoformat()
    return json.dumps({"bot": fields, "installer": installer}).encode()


def _bot(record: dict[str, Any]) -> Bot:
    return Bot(**record["bot"])


class StoreInstallations(AsyncInstallationStore):
    """Bot installations (Bolt runs with installation_store_bot_only=True): one encrypted
    record per workspace, or per Grid organisation for an org-wide install."""

    def __init__(self, store: Store, cipher: TokenCipher) -> None:
        self._store = store
        self._cipher = cipher

    @property
    def logger(self) -> logging.Logger:
        return logger

    async def async_save(self, installation: Installation) -> None:
        await self._save(installation.to_bot(), installation.user_id)

    async def async_save_bot(self, bot: Bot) -> None:
        await self._save(bot, None)

    async def _save(self, bot: Bot, installer: str | None) -> None:
        key = keys.INSTALL.key(
            install_key(bot.team_id, bot.enterprise_id, bot.is_enterprise_install)
        )
        if key == keys.INSTALL.key(""):
            raise InstallRefused("an installation without a team or enterprise id")
        sealed = self._cipher.encrypt(_record(bot, installer))
        try:
            async with on_primary(self._store) as store:
                if await store.get(key, _RAW) is None and await self.count() >= MAX_INSTALLATIONS:
                    raise InstallRefused(f"{MAX_INSTALLATIONS} installations kept already")
                await store.set(key, sealed, _RAW, INSTALL_TTL_SECONDS)
        except StoreError as exc:
            logger.warning("an installation could not be saved: %s", exc.message)
            raise InstallRefused("the state store could not save the installation") from None

    async def find_by_key(self, key: str) -> Bot | None:
        """The installation `key` (bot.tenant.install_key) names, for the recovery loop."""
        record = await self._read(key)
        return _bot(record) if record is not None else None

    async def _read(self, install: str) -> dict[str, Any] | None:
        if not install:
            return None
        try:
            async with on_primary(self._store) as store:
                sealed = await store.get(keys.INSTALL.key(install), _RAW)
        except StoreError as exc:
            logger.warning("an installation could not be read (not authorized): %s", exc.message)
            return None
        opened = self._cipher.decrypt(sealed) if sealed is not None else None
        if opened is None or sealed is None:
            return None
        await self._reseal(keys.INSTALL.key(install), sealed)
        try:
            record: dict[str, Any] = json.loads(opened)
            return record
        except ValueError:
            return None

    async def _reseal(self, key: str, sealed: bytes) -> None:
        """A record an older key sealed is sealed again under the first, once, so the old
        key can be dropped when `gdocs-bot check` opens every record without it (compared
        and set: an uninstall in between is not undone)."""
        rotated = self._cipher.rotated(sealed)
        if rotated is None:
            return
        try:
            async with on_primary(self._store) as store:
                await store.replace(key, sealed, rotated, _RAW, INSTALL_TTL_SECONDS)
        except StoreError as exc:
            logger.info("an installation was not sealed again yet: %s", exc.message)

    async def async_find_bot(
        self,
        *,
        enterprise_id: str | None,
        team_id: str | None,
        is_enterprise_install: bool | None = False,
    ) -> Bot | None:
        record = await self._find(enterprise_id, team_id, bool(is_enterprise_install))
        return _bot(record) if record is not None else None

    async def _find(
        self, enterprise_id: str | None, team_id: str | None, org_wide: bool
    ) -> dict[str, Any] | None:
        record = await self._read(install_key(team_id, enterprise_id, org_wide))
        if record is None and not org_wide and enterprise_id:
            # a payload that does not say is_enterprise_install: the organisation's install
            record = await self._read(enterprise_id)
            if record is not None and not record["bot"].get("is_enterprise_install"):
                return None
        return record

    async def async_find_installation(
        self,
        *,
        enterprise_id: str | None,
        team_id: str | None,
        user_id: str | None = None,
        is_enterprise_install: bool | None = False,
    ) -> Installation | None:
        record = await self._find(enterprise_id, team_id, bool(is_enterprise_install))
        if record is None:
            return None
        return Installation(user_id=record.get("installer") or "", **record["bot"])

    async def async_delete_bot(self, *, enterprise_id: str | None, team_id: str | None) -> None:
        await self._delete(enterprise_id, team_id)

    async def async_delete_installation(
        self, *, enterprise_id: str | None, team_id: str | None, user_id: str | None = None
    ) -> None:
        if user_id is None:  # one installer's tokens: we keep none but the bot's
            await self._delete(enterprise_id, team_id)

    async def async_delete_all(self, *, enterprise_id: str | None, team_id: str | None) -> None:
        await self._delete(enterprise_id, team_id)

    async def _delete(self, enterprise_id: str | None, team_id: str | None) -> None:
        # Bolt's uninstall listeners pass the event's ids but not whether the install was
        # org-wide: the workspace's own install if there is one, else its organisation's
        async with on_primary(self._store) as store:
            key = keys.INSTALL.key(team_id) if team_id else ""
            if not key or await store.get(key, _RAW) is None:
                key = keys.INSTALL.key(enterprise_id) if enterprise_id else ""
            if key:
                await store.delete(key)

    async def count(self) -> int:
        """How many installations are kept."""
        return len(await self._scan())

    async def count_opened(self) -> tuple[int, int]:
        """(kept, opened by the configured keys), from one read (`gdocs-bot check`)."""
        kept = await self._scan()
        return len(kept), sum(self._cipher.decrypt(sealed) is not None for _, sealed in kept)

    async def _scan(self) -> list[tuple[str, bytes]]:
        async with on_primary(self._store) as store:
            return await store.scan(keys.INSTALL.prefix, _RAW, MAX_INSTALLATIONS + 1)


class StoreOAuthStates(AsyncOAuthStateStore):
    """The install page's one-time `state`: a random id and the time it was issued, signed
    with SLACK_STATE_SECRET. Issuing writes nothing (anyone may open the install page);
    using it marks it used in the shared store (the redirect may land on another replica)
    until it would have expired, so it is accepted once."""

    def __init__(
        self,
        store: Store,
        secret: str,
        expiration_seconds: int = 600,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._store = store
        self._secret = secret.encode()
        self._expiration = expiration_seconds
        self._clock = clock

    @property
    def logger(self) -> logging.Logger:
        return logger

    def _signature(self, issued: str) -> str:
        return hmac.new(self._secret, issued.encode(), hashlib.sha256).hexdigest()

    async def async_issue(self, *args: Any, **kwargs: Any) -> str:
        issued = f"{secrets.token_urlsafe(18)}.{int(self._clock())}"
        return f"{issued}.{self._signature(issued)}"

    async def async_consume(self, state: str) -> bool:
        issued, _, signature = state.rpartition(".")
        nonce, _, at = issued.partition(".")
        expected = self._signature(issued).encode()
        if not at.isdigit() or not hmac.compare_digest(signature.encode(), expected):
            return False
        left = int(at) + self._expiration - self._clock()
        if not 0 < left <= self._expiration + 60:  # expired, or issued in the future
            return False
        try:
            async with on_primary(self._store) as store:
                return await store.add(keys.OAUTH_STATE.key(nonce), "1", TEXT, left)
        except StoreError as exc:
            logger.warning("an install page's state could not be checked: %s", exc.message)
            return False
