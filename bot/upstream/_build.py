"""Wiring: settings -> credentials -> one pooled HTTP transport -> two MCP clients -> service."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from urllib.parse import urlsplit

from bot.observability.metrics import Metrics
from bot.settings import Settings
from bot.upstream._aiohttp import AiohttpTransport
from bot.upstream._auth import ApiKeyAuth, Auth, NoAuth, OAuth
from bot.upstream._cache import Cache, MemoryCache
from bot.upstream._errors import Redactor, ServerContext
from bot.upstream._service import GoogleDocsService
from bot.upstream._transport import McpClient


def _utc_now() -> datetime:
    return datetime.now(UTC)


def build_service(
    settings: Settings,
    *,
    metrics: Metrics | None = None,
    cache: Cache | None = None,
    clock: Callable[[], datetime] | None = None,
    backoff_base: float = 0.5,
) -> GoogleDocsService:
    """A ready service; nothing is contacted until the first call. Close it with `aclose()`.

    `clock` (aware UTC datetimes) decides when a spent answer quota resets and when OAuth
    tokens are refreshed; `backoff_base` is the first retry's backoff window in seconds.
    """
    clock = _utc_now if clock is None else clock
    metrics = Metrics() if metrics is None else metrics
    # `is None`, not `or`: an empty cache is falsy
    cache = MemoryCache(settings.cache_max_entries) if cache is None else cache
    timeout = settings.mcp_timeout_seconds

    oauth: OAuth | None = None
    if settings.google_oauth_configured:  # never probe ADC/the metadata server otherwise
        oauth = OAuth(
            settings.google_application_credentials,
            settings.google_cloud_project,
            timeout=timeout,
            clock=clock,
        )
    dk_auth: Auth
    if settings.google_api_key is not None:
        dk_auth = ApiKeyAuth(settings.google_api_key.get_secret_value())
    elif oauth is not None:
        dk_auth = oauth
    else:
        dk_auth = NoAuth()
    pay_auth: Auth = oauth if oauth is not None else NoAuth()

    # one pool for both servers, each with `mcp_max_concurrency` calls at most
    transport = AiohttpTransport(max_connections=2 * settings.mcp_max_concurrency + 4)

    def client(key: str, url: str, auth: Auth) -> McpClient:
        dk = key == "developer_knowledge"
        ctx = ServerContext(
            key="developer_knowledge" if dk else "pay",
            display="The Google documentation service"
            if dk
            else "The Google Pay & Wallet documentation service",
            url_setting="DEVELOPER_KNOWLEDGE_MCP_URL" if dk else "PAY_MCP_URL",
            api_service=_service_name(url, "developerknowledge" if dk else "paydeveloper"),
            auth=auth.kind,
            timeout=timeout,
            redact=Redactor(lambda: dk_auth.secrets() + pay_auth.secrets()),
        )
        return McpClient(
            ctx,
            url,
            transport,
            auth,
            timeout=timeout,
            max_response_bytes=settings.mcp_max_response_bytes,
            max_concurrency=settings.mcp_max_concurrency,
            max_retries=settings.mcp_max_retries,
            backoff_base=backoff_base,
        )

    dk_client = client("developer_knowledge", str(settings.developer_knowledge_mcp_url), dk_auth)
    pay_client = client("pay", str(settings.pay_mcp_url), pay_auth)
    service = GoogleDocsService(
        settings,
        transport=transport,
        dk=dk_client,
        pay=pay_client,
        auths=[dk_auth] if dk_auth is pay_auth else [dk_auth, pay_auth],
        pay_configured=oauth is not None,
        metrics=metrics,
        cache=cache,
        clock=clock,
    )
    dk_client.on_answer = service.dk_answered
    return service


def _service_name(url: str, default: str) -> str:
    """`developerknowledge.googleapis.com` for the gcloud hint (the default on other hosts)."""
    host = urlsplit(url).hostname or ""
    return host if host.endswith(".googleapis.com") else f"{default}.googleapis.com"
