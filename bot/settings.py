"""The one typed configuration object, loaded once from the environment and `.env`."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import AnyHttpUrl, Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from bot.channels import parse_channel_ids, parse_user_ids
from bot.errors import ConfigError

DEFAULT_DK_URL = "https://developerknowledge.googleapis.com/mcp"
DEFAULT_PAY_URL = "https://paydeveloper.googleapis.com/mcp"
DEFAULT_DK_REST_URL = "https://developerknowledge.googleapis.com/v1"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_file=".env",
        env_file_encoding="utf-8",
        extra="ignore",
        case_sensitive=False,
        hide_input_in_errors=True,
    )

    slack_bot_token: SecretStr | None = None
    slack_signing_secret: SecretStr | None = None
    #: app-level token (xapp-…); when set the bot runs in Socket Mode
    slack_app_token: SecretStr | None = None
    slack_api_url: AnyHttpUrl = AnyHttpUrl("https://slack.com/api/")
    #: installs in several workspaces (Bolt's OAuth flow), used only without SLACK_BOT_TOKEN
    slack_client_id: str | None = None
    slack_client_secret: SecretStr | None = None
    #: signs the OAuth `state` the install page hands out
    slack_state_secret: SecretStr | None = None
    #: Fernet key(s), comma-separated (the first encrypts): installations are stored encrypted
    slack_token_encryption_key: SecretStr | None = None
    #: people from other organisations (Slack Connect guests): "deny" answers members only
    external_users: Literal["deny", "answer"] = "deny"

    google_api_key: SecretStr | None = None
    google_application_credentials: Path | None = None
    google_cloud_project: str | None = None
    developer_knowledge_mcp_url: AnyHttpUrl = AnyHttpUrl(DEFAULT_DK_URL)
    pay_mcp_url: AnyHttpUrl = AnyHttpUrl(DEFAULT_PAY_URL)
    #: Developer Knowledge's face: "rest" adds cited spans, product scope and page dates
    developer_knowledge_api: Literal["mcp", "rest"] = "mcp"
    developer_knowledge_rest_url: AnyHttpUrl = AnyHttpUrl(DEFAULT_DK_REST_URL)
    #: Google's search units a minute (each search and each answer takes one): REST's early
    #: sources are skipped near it; 0 = not counted
    search_quota_per_minute: int = Field(100, ge=0, le=100_000)
    #: end-to-end bound of one upstream call, retries included
    mcp_timeout_seconds: float = Field(30.0, gt=0, le=600)
    mcp_max_concurrency: int = Field(32, ge=1, le=1000)
    #: retries of 503/504/connection errors, within the timeout
    mcp_max_retries: int = Field(3, ge=0, le=10)
    mcp_max_response_bytes: int = Field(4_000_000, ge=10_000)
    cache_answer_ttl_seconds: float = Field(3600, ge=0)
    cache_search_ttl_seconds: float = Field(3600, ge=0)
    cache_document_ttl_seconds: float = Field(86400, ge=0)
    #: keys of one family kept in memory or SQLite; Redis bounds by TTLs
    cache_max_entries: int = Field(5000, ge=1)
    #: once Google says a quota is spent, search instead until it resets; false: every new
    #: question tries answer_query again
    answer_quota_skip_until_reset: bool = True
    # answer_query's quota per Google Cloud project (Google's default: 10 a minute, 50 a
    # Pacific day); 0 = not limited here
    answer_quota_per_minute: int = Field(10, ge=0, le=100_000)
    answer_quota_per_day: int = Field(50, ge=0, le=10_000_000)
    answer_quota_per_user_per_day: int = Field(10, ge=0, le=10_000_000)
    #: wait for a per-minute slot when one frees within this long (0 = never wait)
    answer_quota_wait_seconds: float = Field(10.0, ge=0, le=60)
    #: how long a replica trusts its last look at the shared 429 pause (0 = every call)
    answer_quota_pause_check_seconds: float = Field(1.0, ge=0, le=10)

    #: sqlite:///relative.db, sqlite:////absolute.db, redis://…, rediss://… or memory://
    #: (a secret: it may carry a Redis password)
    state_url: SecretStr = SecretStr("sqlite:///gdocs-state.db")
    #: so one Redis can serve several bots
    state_prefix: str = Field("gdocs:", min_length=1, max_length=64)
    #: the longest one store call may take before the bot goes on without it
    state_timeout_seconds: float = Field(0.5, gt=0, le=5)

    max_query_chars: int = Field(2000, ge=10, le=20000)
    #: a text with fewer words, no question mark and no question word is a keyword lookup
    #: (search_documents, not the scarce answer_query)
    answer_min_words: int = Field(4, ge=0, le=50)
    route_pay_questions: bool = True
    rate_limit_per_user_per_minute: int = Field(10, ge=0)  # 0 = unlimited
    dedupe_ttl_seconds: float = Field(600, gt=0)
    #: longer documents are uploaded as a Markdown file instead of paged messages
    doc_file_threshold_chars: int = Field(20000, ge=1000)
    #: follow-ups in a thread the bot answered in, without a mention: from whom
    thread_followups: Literal["asker", "anyone", "off"] = "asker"
    #: how long votes and answer records are kept (`gdocs-bot feedback export`, `report`)
    feedback_retention_days: int = Field(180, ge=1, le=3650)
    #: check each generated answer's commands against the pages it cites (nothing is run);
    #: past the timeout the answer goes out "not checked"
    verify_answers: bool = True
    verify_timeout_seconds: float = Field(2.0, gt=0, le=30)
    #: channel ids (comma-separated) where every top-level question is answered without a
    #: mention, whatever `/gdocs channel` says there (docs/answer-channels.md)
    answer_channels: str = Field("", max_length=10_000)
    channel_settings_admins_only: bool = False
    channel_settings_retention_days: int = Field(365, ge=1, le=3650)
    #: a team answer says "review due" to its author and admins this many days after saving
    team_answer_review_days: int = Field(180, ge=1, le=3650)
    #: user ids (comma- or space-separated) who manage team answers and review 👎 suggestions,
    #: besides workspace admins
    team_answers_admins: str = Field("", max_length=10_000)
    #: stream threaded answers with a task timeline and a Stop button (chat.startStream)
    stream_answers: bool = True
    #: acknowledged work of a replica that died is taken over after its lease; work older than
    #: the max age is dropped (and counted) instead of answered late
    work_lease_seconds: float = Field(30.0, ge=0.5, le=600)
    work_max_age_seconds: float = Field(3600.0, ge=10, le=86400)
    work_recovery_seconds: float = Field(10.0, ge=0.2, le=600)

    host: str = "0.0.0.0"  # noqa: S104 - the container must listen on all interfaces
    port: int = Field(3000, ge=0, le=65535)
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    log_format: Literal["text", "json"] = "text"
    shutdown_grace_seconds: float = Field(10.0, ge=0, le=300)
    #: asyncio's own where uvloop is missing
    event_loop: Literal["uvloop", "asyncio"] = "uvloop"
    readiness_probe_seconds: float = Field(60.0, ge=0.5, le=3600)

    @field_validator("answer_channels")
    @classmethod
    def _channel_ids(cls, value: str) -> str:
        parse_channel_ids(value)  # ValueError names the first id that is not one
        return value

    @field_validator("team_answers_admins")
    @classmethod
    def _user_ids(cls, value: str) -> str:
        parse_user_ids(value)  # ValueError names the first id that is not one
        return value

    @field_validator("log_level", mode="before")
    @classmethod
    def _upper(cls, value: object) -> object:
        return value.upper() if isinstance(value, str) else value

    @field_validator("developer_knowledge_api", "external_users", mode="before")
    @classmethod
    def _lower(cls, value: object) -> object:
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("state_url", mode="before")
    @classmethod
    def _default_state_url(cls, value: object) -> object:
        return (value.strip() or "sqlite:///gdocs-state.db") if isinstance(value, str) else value

    @field_validator(
        "slack_bot_token",
        "slack_signing_secret",
        "slack_app_token",
        "slack_client_id",
        "slack_client_secret",
        "slack_state_secret",
        "slack_token_encryption_key",
        "google_api_key",
        "google_application_credentials",
        "google_cloud_project",
        mode="before",
    )
    @classmethod
    def _blank_is_unset(cls, value: object) -> object:
        # `.env.example` copies leave settings as `NAME=`; treat that as not configured
        return (value.strip() or None) if isinstance(value, str) else value

    @property
    def answer_channel_ids(self) -> frozenset[str]:
        return parse_channel_ids(self.answer_channels)

    @property
    def team_admin_ids(self) -> frozenset[str]:
        return parse_user_ids(self.team_answers_admins)

    @property
    def oauth_mode(self) -> bool:
        """Installs in several workspaces: Slack's OAuth flow, a token per installation."""
        return self.slack_bot_token is None and self.slack_client_id is not None

    @property
    def socket_mode(self) -> bool:
        return self.slack_app_token is not None

    @property
    def google_oauth_configured(self) -> bool:
        """Only when configured, so nothing probes the metadata server (on GCP, set
        GOOGLE_CLOUD_PROJECT alone: Application Default Credentials come from the platform)."""
        return self.google_application_credentials is not None or bool(self.google_cloud_project)

    def slack_problems(self) -> list[str]:
        """What is missing for `serve`, one line per problem (empty when it can start)."""
        problems: list[str] = []
        token = self.slack_bot_token.get_secret_value() if self.slack_bot_token else ""
        if self.oauth_mode:
            problems += self._oauth_problems()
        elif not token:
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

    def _oauth_problems(self) -> list[str]:
        problems: list[str | None] = [
            f"{name} is not set (needed for installs by OAuth, with SLACK_CLIENT_ID)"
            for name, value in (
                ("SLACK_CLIENT_SECRET", self.slack_client_secret),
                ("SLACK_STATE_SECRET", self.slack_state_secret),
            )
            if value is None
        ]
        state = self.slack_state_secret
        if state is not None and len(state.get_secret_value()) < 16:
            problems.append("SLACK_STATE_SECRET must be at least 16 characters (a random string)")
        problems.append(encryption_key_problem(reveal(self.slack_token_encryption_key) or ""))
        return [p for p in problems if p]

    @property
    def oauth_ignored(self) -> str | None:
        """The start-up line saying SLACK_CLIENT_ID is ignored beside SLACK_BOT_TOKEN."""
        if self.slack_bot_token is None or self.slack_client_id is None:
            return None
        return (
            "SLACK_CLIENT_ID is unused while SLACK_BOT_TOKEN is set (one workspace); "
            "leave SLACK_BOT_TOKEN unset for installs by OAuth"
        )

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


def encryption_key_problem(value: str) -> str | None:
    """Why SLACK_TOKEN_ENCRYPTION_KEY (Fernet keys, comma-separated) cannot be used, or None;
    never echoing the value."""
    from cryptography.fernet import Fernet  # OAuth mode only: not imported at every start

    make = (
        'python -c "from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())"'
    )
    found = [k.strip() for k in value.split(",") if k.strip()]
    if not found:
        return f"SLACK_TOKEN_ENCRYPTION_KEY is not set (it encrypts the installs; make one: {make})"
    try:
        for key in found:
            Fernet(key.encode())
    except ValueError:
        return f"SLACK_TOKEN_ENCRYPTION_KEY: each key must be a Fernet key (make one: {make})"
    return None


def reveal(secret: SecretStr | None) -> str | None:
    return secret.get_secret_value() if secret is not None else None


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
