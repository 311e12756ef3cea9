"""Wiring: config -> credentials -> one pooled HTTP transport -> two MCP clients -> service."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Literal
from urllib.parse import urlsplit

from bot.observability.metrics import Metrics
from bot.quota import AnswerQuota, Tally
from bot.redact import Redactor
from bot.store import MemoryStore, Store, WriteBehind
from bot.upstream._aiohttp import AiohttpTransport
from bot.upstream._auth import ApiKeyAuth, Auth, NoAuth
from bot.upstream._config import UpstreamConfig
from bot.upstream._errors import ServerContext
from bot.upstream._service import GoogleDocsService
from bot.upstream._tools import Heartbeat
from bot.upstream._transport import McpClient


def _utc_now() -> datetime:
    return datetime.now(UTC)


def build_service(
    config: UpstreamConfig,
    *,
    store: Store | None = None,
    metrics: Metrics | None = None,
    clock: Callable[[], datetime] | None = None,
    backoff_base: float = 0.5,
    sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    tally: Tally | None = None,
    behind: WriteBehind | None = None,
) -> GoogleDocsService:
    """A ready service; nothing is contacted until the first call. Close it with `aclose()`.

    `store` keeps results (a fresh memory store by default); `clock` (aware UTC datetimes)
    decides when a spent answer quota resets and when OAuth tokens are refreshed;
    `backoff_base` is the first retry's backoff window in seconds; `sleep` is how the quota
    governor waits for a per-minute slot; `tally` counts answer_query calls made and refused
    (for `gdocs-bot report`); `behind` takes the writes nobody waits for (fetched pages,
    checked answers) to a later batch (None: each is written at once).
    """
    clock = _utc_now if clock is None else clock
    metrics = Metrics() if metrics is None else metrics
    store = MemoryStore() if store is None else store
    dk_auth, pay_auth = _credentials(config, clock)
    # one pool for both servers, each with `max_concurrency` calls at most
    transport = AiohttpTransport(max_connections=2 * config.max_concurrency + 4)
    heartbeat = Heartbeat()
    dk, pay = _clients(config, transport, dk_auth, pay_auth, heartbeat, backoff_base)
    return GoogleDocsService(
        config,
        transport=transport,
        dk=dk,
        pay=pay,
        auths=[dk_auth] if dk_auth is pay_auth else [dk_auth, pay_auth],
        heartbeat=heartbeat,
        store=store,
        quota=AnswerQuota(
            store,
            config.quota,
            clock=clock,
            metrics=metrics,
            sleep=sleep,
            tally=tally,
            behind=behind,
        ),
        metrics=metrics,
        clock=clock,
        behind=behind,
    )


def _clients(
    config: UpstreamConfig,
    transport: AiohttpTransport,
    dk_auth: Auth,
    pay_auth: Auth,
    heartbeat: Heartbeat,
    backoff_base: float,
) -> tuple[McpClient, McpClient]:
    """The Developer Knowledge and Pay clients, on one transport, with one redactor."""
    # the credentials the clients hold (an OAuth token changes): asked for on every use
    redact = Redactor(current=lambda: [*dk_auth.secrets(), *pay_auth.secrets()])

    def client(key: Literal["developer_knowledge", "pay"], url: str, auth: Auth) -> McpClient:
        dk = key == "developer_knowledge"
        server = ServerContext(
            key=key,
            url_setting="DEVELOPER_KNOWLEDGE_MCP_URL" if dk else "PAY_MCP_URL",
            api_service=_service_name(url, "developerknowledge" if dk else "paydeveloper"),
            auth=auth.kind,
            timeout=config.timeout,
            redact=redact,
        )
        return McpClient(
            server,
            url,
            transport,
            auth,
            timeout=config.timeout,
            max_response_bytes=config.max_response_bytes,
            max_concurrency=config.max_concurrency,
            max_retries=config.max_retries,
            backoff_base=backoff_base,
            on_answer=heartbeat.beat if dk else None,
        )

    dk = client("developer_knowledge", config.developer_knowledge_url, dk_auth)
    return dk, client("pay", config.pay_url, pay_auth)


def _credentials(config: UpstreamConfig, clock: Callable[[], datetime]) -> tuple[Auth, Auth]:
    """(Developer Knowledge's, Pay's): the API key for DK when there is one, else OAuth when
    configured, else none; Pay takes OAuth only."""
    oauth: Auth | None = None
    if config.oauth_configured:  # never probe ADC/the metadata server otherwise
        from bot.upstream._oauth import OAuth  # google-auth, only for a run that uses it

        oauth = OAuth(config.credentials_file, config.project, timeout=config.timeout, clock=clock)
    dk_auth: Auth
    if config.api_key is not None:
        dk_auth = ApiKeyAuth(config.api_key)
    elif oauth is not None:
        dk_auth = oauth
    else:
        dk_auth = NoAuth()
    return dk_auth, oauth if oauth is not None else NoAuth()


def _service_name(url: str, default: str) -> str:
    """`developerknowledge.googleapis.com` for the gcloud hint (the default on other hosts)."""
    host = urlsplit(url).hostname or ""
    return host if host.endswith(".googleapis.com") else f"{default}.googleapis.com"
