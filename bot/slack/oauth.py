"""Installs in several workspaces (OAuth mode: SLACK_CLIENT_ID without SLACK_BOT_TOKEN).

Bolt's own OAuth flow serves GET /slack/install (its install page, which sets the state
cookie) and GET /slack/oauth_redirect (oauth.v2.access, then its success or failure page);
the installations and the one-time states live in our store (bot/slack/installs.py), so a
restart or another replica on the same store answers every installed workspace with its own
token. An uninstall deletes that installation's tokens, channel settings and team answers."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response, to_bolt_request
from slack_bolt.async_app import AsyncApp, AsyncBoltContext
from slack_bolt.authorization.async_authorize import AsyncInstallationStoreAuthorize
from slack_bolt.listener.async_builtins import AsyncTokenRevocationListeners
from slack_bolt.oauth.async_oauth_settings import AsyncOAuthSettings
from slack_sdk.web.async_client import AsyncWebClient

from bot import tenant
from bot.settings import Settings, reveal
from bot.slack.deps import SlackDeps
from bot.slack.forget import forget_installation
from bot.store import Store

if TYPE_CHECKING:  # cryptography (about 6 MB) is loaded only in OAuth mode
    from bot.slack.installs import StoreInstallations, StoreOAuthStates

logger = logging.getLogger(__name__)

INSTALL_PATH = "/slack/install"
REDIRECT_PATH = "/slack/oauth_redirect"
#: what an install asks for: manifest.yml's bot scopes (tests/test_oauth_e2e.py compares)
BOT_SCOPES = (
    "app_mentions:read",
    "assistant:write",
    "channels:history",
    "channels:read",
    "chat:write",
    "commands",
    "files:write",
    "groups:history",
    "groups:read",
    "im:history",
    "links:read",
    "links:write",
    "mpim:read",
    "reactions:write",
    "users:read",
)
#: how long an install page's state (and its cookie) stays usable
STATE_SECONDS = 600


@dataclass(frozen=True)
class Installs:
    """Where OAuth mode keeps its installations and the install pages' states."""

    installations: StoreInstallations
    states: StoreOAuthStates


def open_installs(settings: Settings, store: Store) -> Installs | None:
    """The stores of OAuth mode; None with one token (SLACK_BOT_TOKEN, the default)."""
    if not settings.oauth_mode:
        return None
    from bot.slack.installs import StoreInstallations, StoreOAuthStates, TokenCipher

    cipher = TokenCipher.from_setting(reveal(settings.slack_token_encryption_key) or "")
    secret = reveal(settings.slack_state_secret) or ""
    return Installs(
        StoreInstallations(store, cipher), StoreOAuthStates(store, secret, STATE_SECONDS)
    )


def oauth_settings(
    settings: Settings, installs: Installs, client: AsyncWebClient, bolt_logger: logging.Logger
) -> AsyncOAuthSettings:
    """Bolt's OAuth settings over our stores, bot tokens only."""
    client_id = settings.slack_client_id or ""
    client_secret = reveal(settings.slack_client_secret) or ""
    oauth = AsyncOAuthSettings(
        client_id=client_id,
        client_secret=client_secret,
        scopes=list(BOT_SCOPES),
        user_scopes=[],
        install_path=INSTALL_PATH,
        redirect_uri_path=REDIRECT_PATH,
        installation_store=installs.installations,
        installation_store_bot_only=True,
        state_store=installs.states,
        state_expiration_seconds=STATE_SECONDS,
        logger=bolt_logger,
    )
    # Bolt's default calls auth.test on every request; cached, once per token and process
    # (an uninstalled workspace is still refused: its token is looked up in the store first)
    oauth.authorize = AsyncInstallationStoreAuthorize(
        logger=bolt_logger,
        installation_store=installs.installations,
        client_id=client_id,
        client_secret=client_secret,
        bot_only=True,
        cache_enabled=True,
        client=client,
    )
    return oauth


def oauth_routes(app: AsyncApp) -> list[web.RouteDef]:
    """GET /slack/install and /slack/oauth_redirect (Bolt's flow); none with one token."""
    flow = app.oauth_flow
    if flow is None:
        return []

    async def page(request: web.Request) -> web.StreamResponse:
        install = request.path == flow.install_path
        handle = flow.handle_installation if install else flow.handle_callback
        return await to_aiohttp_response(await handle(await to_bolt_request(request)))

    return [web.get(flow.install_path, page), web.get(flow.redirect_uri_path, page)]


def register(app: AsyncApp, deps: SlackDeps) -> None:
    """Uninstalls: Bolt's token revocation listeners, then what the installation saved."""
    if deps.installs is None:
        return
    revoked = AsyncTokenRevocationListeners(deps.installs.installations)
    app.event("tokens_revoked")(revoked.handle_tokens_revoked_events)

    @app.event("app_uninstalled")
    async def uninstalled(context: AsyncBoltContext) -> None:
        await revoked.handle_app_uninstalled_events(context)
        key = tenant.current()  # set from this event's ids (app.py's for_its_installation)
        await forget_installation(deps, key)
        logger.info("uninstalled: its tokens and settings deleted", extra={"install": key})


async def client_for(deps: SlackDeps, client: AsyncWebClient, key: str) -> AsyncWebClient | None:
    """A client with installation `key`'s token (sharing `client`'s session, URL and retries),
    or None when it was uninstalled (or cannot be read now)."""
    bot = None if deps.installs is None else await deps.installs.installations.find_by_key(key)
    if bot is None or not bot.bot_token:
        return None
    return AsyncWebClient(
        token=bot.bot_token,
        base_url=client.base_url,
        timeout=client.timeout,
        session=client.session,
        team_id=bot.team_id,
        logger=client.logger,
        retry_handlers=list(client.retry_handlers),
    )
