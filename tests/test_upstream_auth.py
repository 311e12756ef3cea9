"""OAuth for Pay (and DK without a key): a service-account key file against a loopback token
endpoint, the Bearer and quota-project headers, early refresh, and no ADC probing unless
OAuth is configured."""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import google.auth
import pytest

from bot.errors import AuthError, Unavailable
from bot.render import error_sentence
from tests.fakes.mcp_servers import FakeDeveloperKnowledge, FakePay, Fault, google_error
from tests.fakes.oauth_token import SA_EMAIL, FakeTokenServer
from tests.fakes.upstream import service_for, settings_for

SCOPE = "https://www.googleapis.com/auth/cloud-platform"


class Clock:
    def __init__(self) -> None:
        self.now = datetime.now(UTC)

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def token_server() -> Iterator[FakeTokenServer]:
    server = FakeTokenServer()
    server.tokens.append("pay-token")
    server.start()
    yield server
    server.stop()


@pytest.fixture
def key_file(token_server: FakeTokenServer, tmp_path: Path) -> Path:
    return token_server.service_account_file(tmp_path)


def _oauth_settings(
    dk: FakeDeveloperKnowledge | None, pay: FakePay, key_file: Path, **kw: Any
) -> Any:
    return settings_for(
        dk, pay, google_application_credentials=key_file, google_cloud_project="test-project", **kw
    )


async def test_pay_calls_carry_the_bearer_token_and_quota_project(
    pay_server: FakePay, token_server: FakeTokenServer, key_file: Path
) -> None:
    """The service-account token and X-Goog-User-Project reach the Pay server."""
    async with service_for(_oauth_settings(None, pay_server, key_file)) as service:
        answer = await service.pay("PaymentDataRequest object", language="it-IT")
        assert service.pay_configured
    assert "pay" == answer.kind
    assert ["PaymentDataRequest"] == [hit.title for hit in answer.hits]
    call = pay_server.tool_calls("search_documentation")[0]
    assert "Bearer pay-token" == call.headers["authorization"]
    assert "test-project" == call.headers["x-goog-user-project"]
    assert {"userQuery": "PaymentDataRequest object", "languageCode": "it-IT"} == call.arguments
    assert SA_EMAIL == token_server.grants[0]["iss"]
    assert SCOPE == token_server.grants[0]["scope"]


async def test_one_token_serves_many_concurrent_calls(
    pay_server: FakePay, token_server: FakeTokenServer, key_file: Path
) -> None:
    """Twenty calls at once share one token request."""
    async with service_for(_oauth_settings(None, pay_server, key_file)) as service:
        await asyncio.gather(*(service.pay(f"PaymentDataRequest {i}") for i in range(20)))
    assert 1 == token_server.requests
    assert 20 == len(pay_server.calls)


async def test_token_is_refreshed_shortly_before_it_expires(
    pay_server: FakePay, token_server: FakeTokenServer, key_file: Path
) -> None:
    """A token with ten minutes left is reused; with under five minutes left it is replaced."""
    pay_server.bearer = None  # accept whichever token arrives; the test reads the headers
    token_server.tokens.clear()
    clock = Clock()
    async with service_for(_oauth_settings(None, pay_server, key_file), clock=clock) as service:
        await service.pay("PaymentDataRequest one")
        clock.now += timedelta(seconds=3000)
        await service.pay("PaymentDataRequest two")
        clock.now += timedelta(seconds=400)
        await service.pay("PaymentDataRequest three")
    assert ["Bearer token-1", "Bearer token-1", "Bearer token-2"] == [
        c.headers["authorization"] for c in pay_server.calls
    ]


async def test_refused_credentials_name_the_setting(
    pay_server: FakePay, token_server: FakeTokenServer, key_file: Path
) -> None:
    """The token endpoint saying invalid_grant: AuthError naming GOOGLE_APPLICATION_CREDENTIALS."""
    token_server.fail_with = "invalid_grant"
    async with service_for(_oauth_settings(None, pay_server, key_file)) as service:
        with pytest.raises(AuthError) as caught:
            await service.pay("PaymentDataRequest")
        assert re.search("GOOGLE_APPLICATION_CREDENTIALS", error_sentence(caught.value))
    assert "invalid_grant" in error_sentence(caught.value)
    assert "\n" not in error_sentence(caught.value)
    assert [] == pay_server.calls


async def test_permission_denied_names_the_iam_role_and_the_credentials_setting(
    pay_server: FakePay, token_server: FakeTokenServer, key_file: Path
) -> None:
    """403 from Pay: grant roles/mcp.toolUser to the account in GOOGLE_APPLICATION_CREDENTIALS."""
    pay_server.faults.append(
        google_error(403, "PERMISSION_DENIED", "The caller does not have permission")
    )
    async with service_for(_oauth_settings(None, pay_server, key_file)) as service:
        with pytest.raises(AuthError) as caught:
            await service.pay("PaymentDataRequest")
        assert re.search(r"roles/mcp\.toolUser", error_sentence(caught.value))
    assert "GOOGLE_APPLICATION_CREDENTIALS" == caught.value.setting
    assert "GOOGLE_APPLICATION_CREDENTIALS" in error_sentence(caught.value)
    assert 1 == len(pay_server.calls)


async def test_rejected_token_names_the_credentials_setting(
    pay_server: FakePay, token_server: FakeTokenServer, key_file: Path
) -> None:
    """401 for the Bearer token (Pay wants another): AuthError naming
    GOOGLE_APPLICATION_CREDENTIALS, not GOOGLE_API_KEY, and not retried."""
    pay_server.bearer = "the-token-pay-expects"
    async with service_for(_oauth_settings(None, pay_server, key_file)) as service:
        with pytest.raises(AuthError) as caught:
            await service.pay("PaymentDataRequest")
    assert "GOOGLE_APPLICATION_CREDENTIALS" == caught.value.setting
    assert "GOOGLE_APPLICATION_CREDENTIALS" in error_sentence(caught.value)
    assert "GOOGLE_API_KEY" not in error_sentence(caught.value)
    assert 1 == len(pay_server.calls)


@pytest.mark.parametrize(
    "token", ["ya29.a0AfB_byC-Echoed.Token_0123456789", "opaque-oauth-8f2c41d9e7"]
)
async def test_a_server_echoing_the_oauth_token_does_not_leak_it(
    pay_server: FakePay, token_server: FakeTokenServer, key_file: Path, token: str
) -> None:
    """An error quoting the bare access token (no `Bearer` before it) is scrubbed of it,
    whether the token is `ya29.`-shaped or looks like any other word."""
    token_server.tokens.clear()
    token_server.tokens.append(token)
    pay_server.faults.append(
        Fault(
            status=200,
            tool="search_documentation",
            rpc_result={
                "isError": True,
                "content": [{"type": "text", "text": f"backend failed for token {token} here"}],
            },
        )
    )
    async with service_for(_oauth_settings(None, pay_server, key_file)) as service:
        with pytest.raises(Unavailable) as caught:
            await service.pay("PaymentDataRequest")
    assert f"Bearer {token}" == pay_server.calls[0].headers["authorization"]
    assert "backend failed for token [redacted] here" in error_sentence(caught.value)
    assert token not in error_sentence(caught.value)


async def test_unreadable_key_file_names_the_setting(pay_server: FakePay, tmp_path: Path) -> None:
    """A key file that is not JSON: AuthError naming GOOGLE_APPLICATION_CREDENTIALS."""
    bad = tmp_path / "key.json"
    bad.write_text("not json", encoding="utf-8")
    async with service_for(_oauth_settings(None, pay_server, bad)) as service:
        with pytest.raises(AuthError) as caught:
            await service.pay("PaymentDataRequest")
        assert re.search("GOOGLE_APPLICATION_CREDENTIALS", error_sentence(caught.value))


async def test_developer_knowledge_uses_oauth_without_an_api_key(
    dk_server: FakeDeveloperKnowledge, pay_server: FakePay, key_file: Path
) -> None:
    """No GOOGLE_API_KEY but OAuth configured: DK gets the Bearer token too."""
    dk_server.api_key = None
    dk_server.bearer = "pay-token"
    settings = _oauth_settings(dk_server, pay_server, key_file, google_api_key=None)
    async with service_for(settings) as service:
        answer = await service.search("buckets")
    assert answer.hits
    call = dk_server.tool_calls("search_documents")[0]
    assert "Bearer pay-token" == call.headers["authorization"]
    assert "x-goog-api-key" not in call.headers


class _RecordingDefault:
    """Stands in for google.auth.default: records calls, returns refreshable credentials."""

    def __init__(self) -> None:
        self.calls = 0
        self.refresh_threads: list[str] = []

    def __call__(self, scopes: list[str] | None = None, **_: Any) -> tuple[Any, str]:
        self.calls += 1
        recorder = self

        class Credentials:
            token: str | None = None
            expiry: datetime | None = None

            def refresh(self, request: Any) -> None:
                recorder.refresh_threads.append(threading.current_thread().name)
                self.token = "adc-token"
                self.expiry = datetime.now(UTC).replace(tzinfo=None) + timedelta(hours=1)

        return Credentials(), "adc-project"


async def test_adc_is_never_probed_without_oauth_configured(
    dk_server: FakeDeveloperKnowledge, pay_server: FakePay, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With only an API key, google.auth.default is never called (no metadata-server probe)."""
    default = _RecordingDefault()
    monkeypatch.setattr(google.auth, "default", default)
    async with service_for(settings_for(dk_server, pay_server)) as service:
        await service.ask("Create buckets")
        await service.pay("PaymentDataRequest")
        await service.status()
    assert 0 == default.calls


async def test_project_alone_uses_application_default_credentials(
    pay_server: FakePay, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GOOGLE_CLOUD_PROJECT only (workload identity): ADC, refreshed off the event loop."""
    default = _RecordingDefault()
    monkeypatch.setattr(google.auth, "default", default)
    pay_server.bearer = "adc-token"
    settings = settings_for(None, pay_server, google_api_key=None, google_cloud_project="p-1")
    async with service_for(settings) as service:
        answer = await service.pay("PaymentDataRequest")
    assert answer.hits
    assert 1 == default.calls
    assert threading.main_thread().name not in default.refresh_threads
    assert "p-1" == pay_server.calls[0].headers["x-goog-user-project"]
