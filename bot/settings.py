"""The one typed configuration object, loaded once from the environment and `.env`."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import (
    AnyHttpUrl,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
)
from pydantic_settings import BaseSettings, SettingsConfigDict

from bot.channels import parse_channel_ids
from bot.errors import ConfigError

DEFAULT_DK_URL = "https://developerknowledge.googleapis.com/mcp"
DEFAULT_PAY_URL = "https://paydeveloper.googleapis.com/mcp"


class Settings(BaseSettings):
    """Every setting, named exactly as its environment variable (case-insensitive)."""

    model_config = SettingsConfigDict(
        env_file=".env",
        env_file_encoding="utf-8",
        extra="ignore",
        case_sensitive=False,
        hide_input_in_errors=True,
    )

    # --- Slack -------------------------------------------------------------------------
    slack_bot_token: SecretStr | None = None
    slack_signing_secret: SecretStr | None = None
    #: app-level token (xapp-…); when set the bot runs in Socket Mode
    slack_app_token: SecretStr | None = None
    slack_api_url: AnyHttpUrl = AnyHttpUrl("https://slack.com/api/")

    # --- Google ------------------------------------------------------------------------
    google_api_key: SecretStr | None = None
    google_application_credentials: Path | None = None
    google_cloud_project: str | None = None
    developer_knowledge_mcp_url: AnyHttpUrl = AnyHttpUrl(DEFAULT_DK_URL)
    pay_mcp_url: AnyHttpUrl = AnyHttpUrl(DEFAULT_PAY_URL)
    #: end-to-end bound of one upstream call, retries included
    mcp_timeout_seconds: float = Field(30.0, gt=0, le=600)
    #: most upstream calls in flight at once, per server
    mcp_max_concurrency: int = Field(32, ge=1, le=1000)
    #: retries of 503/504/connection errors, within the timeout
    mcp_max_retries: int = Field(3, ge=0, le=10)
    #: largest upstream response body read before it is refused
    mcp_max_response_bytes: int = Field(4_000_000, ge=10_000)

    # --- Caches and budgets --------------------------------------------------------------
    cache_answer_ttl_seconds: float = Field(3600, ge=0)
    cache_search_ttl_seconds: float = Field(3600, ge=0)
    cache_document_ttl_seconds: float = Field(86400, ge=0)
    #: most keys of one kind (answers, documents, dedupe claims, …) the store keeps in memory
    #: or SQLite; Redis bounds by TTLs (and its own maxmemory policy)
    cache_max_entries: int = Field(5000, ge=1)
    #: once Google says a quota is spent, search instead until it resets (midnight Pacific for
    #: the day); false: every new question tries answer_query again
    answer_quota_skip_until_reset: bool = True

    # --- answer_query's quota (per Google Cloud project) -----------------------------------
    #: calls a minute the bot sends at most (Google's default: 10; 0 = not limited here)
    answer_quota_per_minute: int = Field(10, ge=0, le=100_000)
    #: calls a day (Pacific time) the bot sends at most (Google's default: 50; 0 = not limited)
    answer_quota_per_day: int = Field(50, ge=0, le=10_000_000)
    #: generated answers one person may use a day (0 = no per-person cap)
    answer_quota_per_user_per_day: int = Field(10, ge=0, le=10_000_000)
    #: wait for a per-minute slot when one frees within this long (0 = never wait)
    answer_quota_wait_seconds: float = Field(10.0, ge=0, le=60)
    #: how long a replica trusts its last look at the shared 429 pause before the next
    #: answer_query call (0 = look before every call): another replica's 429 is followed
    #: within this, this replica's own at once
    answer_quota_pause_check_seconds: float = Field(1.0, ge=0, le=10)

    # --- State -------------------------------------------------------------------------
    #: where state lives: sqlite:///relative.db, sqlite:////absolute.db, redis://…,
    #: rediss://… or memory:// (a secret: it may carry a Redis password)
    state_url: SecretStr = SecretStr("sqlite:///gdocs-state.db")
    #: prefix of every Redis key, so one Redis can serve several bots
    state_prefix: str = Field("gdocs:", min_length=1, max_length=64)
    #: the longest one store call may take before the bot goes on without it. 0.5 s: a busy
    #: bot's event loop alone can be 150 ms late under a burst, and a slow store is not a
    #: dead one (bench/FINDINGS.md); two calls before the ack still leave Slack's 3 s ample
    state_timeout_seconds: float = Field(0.5, gt=0, le=5)
    #: Redis only: how long the event loop may wait, blocked, for the reply to the one write
    #: an acknowledgement needs (sent on a connection of its own). Under load, through the
    #: pipeline, that write waits for three turns of the loop (60 ms measured); a Redis on the
    #: same network answers in under 1 ms. A later reply is read in a thread and the link
    #: rests 30 s. 0: the acknowledgement's write is pipelined like the rest
    state_ack_wait_ms: float = Field(5.0, ge=0, le=50)
    #: questions longer than this are refused with a message
    max_query_chars: int = Field(2000, ge=10, le=20000)

    # --- Routing -----------------------------------------------------------------------
    #: a text with fewer words than this, no question mark and no question word is a keyword
    #: lookup and goes to search_documents instead of the scarce answer_query
    answer_min_words: int = Field(4, ge=0, le=50)
    #: route Google Pay / Wallet questions to the Pay server's search_documentation
    route_pay_questions: bool = True

    # --- Slack behaviour -----------------------------------------------------------------
    #: questions a user may ask per minute (0 = unlimited)
    rate_limit_per_user_per_minute: int = Field(10, ge=0)
    dedupe_ttl_seconds: float = Field(600, gt=0)
    #: documents longer than this are uploaded as a Markdown file instead of paged messages
    doc_file_threshold_chars: int = Field(20000, ge=1000)
    #: in a thread the bot answered in, answer follow-up questions without an @-mention from
    #: the original asker (asker), from anyone in the thread (anyone), or not at all (off)
    thread_followups: Literal["asker", "anyone", "off"] = "asker"
    #: how long votes on answers (👍 / 👎, with the question, the answer and any comment) are
    #: kept for `gdocs-bot feedback export`; answers take votes for up to 30 days of it
    feedback_retention_days: int = Field(180, ge=1, le=3650)

    # --- Verified answers -------------------------------------------------------------------
    #: check each generated answer's commands and code blocks against the pages it cites
    #: (one get_documents call, none when the pages are cached; nothing is run)
    verify_answers: bool = True
    #: the check's budget after the answer; past it the answer goes out "not checked"
    verify_timeout_seconds: float = Field(2.0, gt=0, le=30)

    # --- Answer channels and per-channel settings (docs/answer-channels.md) ---------------
    #: channels (comma-separated ids, C… or G…) where every top-level question is answered in
    #: its thread without a mention, whatever `/gdocs channel` says there
    answer_channels: str = Field("", max_length=10_000)
    #: only workspace admins and owners may change a channel's settings (`/gdocs channel …`)
    channel_settings_admins_only: bool = False
    #: a channel's settings are kept this long after their last change
    channel_settings_retention_days: int = Field(365, ge=1, le=3650)

    # --- Streamed answers ------------------------------------------------------------------
    #: stream threaded answers (mentions, DMs, follow-ups) with a live task timeline and a
    #: Stop button (chat.startStream); false, or a refused stream: one finished message
    stream_answers: bool = True

    # --- Work in flight (nothing lost on a crash) -----------------------------------------
    #: a replica owns acknowledged work this long without renewing it (it renews every third
    #: of it); work of a replica that died is taken over after this
    work_lease_seconds: float = Field(30.0, ge=0.5, le=600)
    #: unfinished work older than this is dropped (and counted) instead of answered late
    work_max_age_seconds: float = Field(3600.0, ge=10, le=86400)
    #: how often each replica looks for unfinished work whose owner died
    work_recovery_seconds: float = Field(10.0, ge=0.2, le=600)

    # --- Serving -----------------------------------------------------------------------
    host: str = "0.0.0.0"  # noqa: S104 - the container must listen on all interfaces
    port: int = Field(3000, ge=0, le=65535)
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    log_format: Literal["text", "json"] = "text"
    shutdown_grace_seconds: float = Field(10.0, ge=0, le=300)
    #: while the event loop runs later than this, new background work waits its turn, so
    #: acknowledgements do not queue behind it (bot/loadgate.py); 0 turns that off
    load_gate_lag_ms: float = Field(10.0, ge=0, le=10_000)
    #: uvloop's event loop costs ~20 % less CPU per question than asyncio's (bench/RESULTS.md);
    #: asyncio is used where uvloop is not installed (Windows)
    event_loop: Literal["uvloop", "asyncio"] = "uvloop"
    #: how often /readyz re-checks the Developer Knowledge server (every few seconds while down)
    readiness_probe_seconds: float = Field(60.0, ge=0.5, le=3600)

    @field_validator("answer_channels")
    @classmethod
    def _channel_ids(cls, value: str) -> str:
        parse_channel_ids(value)  # ValueError names the first id that is not one
        return value

    @field_validator("log_level", mode="before")
    @classmethod
    def _upper(cls, value: object) -> object:
        return value.upper() if isinstance(value, str) else value

    @field_validator("state_url", mode="before")
    @classmethod
    def _default_state_url(cls, value: object) -> object:
        if isinstance(value, str) and not value.strip():
            return "sqlite:///gdocs-state.db"
        return value.strip() if isinstance(value, str) else value

    @field_validator(
        "slack_bot_token",
        "slack_signing_secret",
        "slack_app_token",
        "google_api_key",
        mode="before",
    )
    @classmethod
    def _blank_is_unset(cls, value: object) -> object:
        # `.env.example` copies leave settings as `NAME=`; treat that as not configured
        if isinstance(value, str) and not value.strip():
            return None
        return value.strip() if isinstance(value, str) else value

    @field_validator("google_application_credentials", "google_cloud_project", mode="before")
    @classmethod
    def _blank_path_is_unset(cls, value: object) -> object:
        if isinstance(value, str) and not value.strip():
            return None
        return value

    # --- derived -------------------------------------------------------------------------
    @property
    def answer_channel_ids(self) -> frozenset[str]:
        return parse_channel_ids(self.answer_channels)

    @property
    def socket_mode(self) -> bool:
        return self.slack_app_token is not None

    @property
    def google_oauth_configured(self) -> bool:
        """OAuth is used only when explicitly configured, so nothing probes the metadata server.

        On GCP (Cloud Run, GKE workload identity) set GOOGLE_CLOUD_PROJECT and leave
        GOOGLE_APPLICATION_CREDENTIALS unset: Application Default Credentials then come from
        the platform.
        """
        return self.google_application_credentials is not None or bool(self.google_cloud_project)

    def slack_problems(self) -> list[str]:
        """What is missing for `serve`, one line per problem (empty when it can start)."""
        problems: list[str] = []
        token = self.slack_bot_token.get_secret_value() if self.slack_bot_token else ""
        if not token:
            problems.append("SLACK_BOT_TOKEN is not set (the bot token, xoxb-…)")
        elif not token.startswith("xoxb-"):
            problems.append("SLACK_BOT_TOKEN must be a bot token starting with xoxb-")
        if self.slack_app_token is not None:
            if not self.slack_app_token.get_secret_value().startswith("xapp-"):
                problems.append("SLACK_APP_TOKEN must be an app-level token starting with xapp-")
        elif self.slack_signing_secret is None:
            problems.append(
                "SLACK_SIGNING_SECRET is not set (needed in HTTP mode; "
                "or set SLACK_APP_TOKEN for Socket Mode)"
            )
        return problems

    def google_problems(self) -> list[str]:
        """What is missing to call the documentation servers at all."""
        problems: list[str] = []
        if self.google_api_key is None and not self.google_oauth_configured:
            problems.append(
                "GOOGLE_API_KEY is not set (or configure OAuth with "
                "GOOGLE_APPLICATION_CREDENTIALS and GOOGLE_CLOUD_PROJECT)"
            )
        creds = self.google_application_credentials
        if creds is not None and not creds.is_file():
            problems.append(f"GOOGLE_APPLICATION_CREDENTIALS: no such file: {creds}")
        return problems


def load_settings() -> Settings:
    """Load and validate the settings; raise ConfigError with one line per problem."""
    try:
        return Settings()
    except ValidationError as exc:
        lines = []
        for err in exc.errors(include_input=False, include_url=False):
            name = "_".join(str(part) for part in err["loc"]).upper() or "SETTINGS"
            lines.append(f"{name}: {err['msg']}")
        raise ConfigError("\n".join(lines), setting=None) from None
