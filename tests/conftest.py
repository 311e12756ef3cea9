"""Test-wide guards: loopback only, no ambient configuration, no metadata-server probes.

Subprocesses get the same loopback guard from `tests/sitecustomize/` (see
`tests/fakes/bot_process.py`)."""

from __future__ import annotations

import os
import socket
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import redis

from bot.settings import Settings
from tests.fakes.bot_process import BotProcess
from tests.fakes.mcp_servers import FakeDeveloperKnowledge, FakePay
from tests.fakes.redis_server import RedisServer, tls_redis_server
from tests.fakes.slack_api import FakeSlack
from tests.sitecustomize.sitecustomize import guarded

# google-auth probes the GCE metadata server when nothing else is configured; point it at a
# closed loopback port so a mistake fails fast instead of leaving the machine.
os.environ["GCE_METADATA_HOST"] = "127.0.0.1:9"
os.environ["GCE_METADATA_IP"] = "127.0.0.1:9"
os.environ["NO_GCE_CHECK"] = "True"

# every setting (named as its environment variable), plus what else changes where the bot
# connects: a proxy from the developer's shell would send loopback traffic elsewhere
_EXTRA_VARS = (
    "GOOGLE_CLOUD_QUOTA_PROJECT",
    "CLOUDSDK_CONFIG",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
    "no_proxy",
)
_CONFIG_VARS = (*sorted(name.upper() for name in Settings.model_fields), *_EXTRA_VARS)

_guarded_connect = guarded(socket.socket.connect)
_guarded_connect_ex = guarded(socket.socket.connect_ex)


@pytest.fixture(autouse=True)
def loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Refuse any socket connection that is not to the loopback range."""
    monkeypatch.setattr(socket.socket, "connect", _guarded_connect)
    monkeypatch.setattr(socket.socket, "connect_ex", _guarded_connect_ex)


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: object) -> None:
    """No setting leaks in from the developer's shell or a `.env` in the checkout."""
    for name in _CONFIG_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)  # type: ignore[arg-type]


@pytest.fixture
def dk_server() -> Iterator[FakeDeveloperKnowledge]:
    """A stateless JSON Developer Knowledge server with two documents, API key `test-key`."""
    server = FakeDeveloperKnowledge()
    server.api_key = "test-key"
    server.add_document(
        "documents/docs.cloud.google.com/storage/docs/creating-buckets",
        "Create buckets",
        "# Create buckets\n\nUse `gcloud storage buckets create gs://NAME`.\n\n"
        "## Console\n\nClick **Create**.",
    )
    server.add_document(
        "documents/firebase.google.com/docs/firestore/pricing",
        "Cloud Firestore pricing",
        "# Pricing\n\nFirestore bills reads, writes and deletes.",
    )
    server.start()
    yield server
    server.stop()


@pytest.fixture
def pay_server() -> Iterator[FakePay]:
    """A Pay server that wants the bearer token `pay-token`."""
    server = FakePay()
    server.bearer = "pay-token"
    server.pages.append(
        (
            "PaymentDataRequest",
            "https://developers.google.com/pay/api/web/reference/request-objects",
            "PaymentDataRequest object: apiVersion, allowedPaymentMethods, transactionInfo.",
        )
    )
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def _redis_server_for_session() -> Iterator[RedisServer]:
    server = RedisServer().start()
    yield server
    server.kill()


@pytest.fixture
def redis_server(_redis_server_for_session: RedisServer) -> RedisServer:
    """A real redis-server on 127.0.0.1 (one per session), emptied for each test. Skips when
    `redis-server` is missing, unless GDOCS_REQUIRE_REDIS=1."""
    _redis_server_for_session.flush()
    return _redis_server_for_session


@pytest.fixture
def inspect(redis_server: RedisServer) -> Iterator[redis.Redis]:
    """A plain client on `redis_server`, to look at the server's keys and clients directly."""
    client = redis.Redis(port=redis_server.port)
    yield client
    client.close()


@pytest.fixture
def tls_redis(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    """A redis-server serving TLS only, on a free port: (port, its CA certificate)."""
    with tls_redis_server(tmp_path) as served:
        yield served


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    """The recording fake Slack Web API on loopback (a module may override it: module-scoped,
    or with a Socket Mode URL)."""
    fake = FakeSlack().start()
    yield fake
    fake.stop()


@pytest.fixture
def start_bot(tmp_path: Path) -> Iterator[Callable[[dict[str, str]], BotProcess]]:
    """Start `python -m bot serve` with the given settings, once it listens; whatever is still
    running at the end is killed."""
    started: list[BotProcess] = []

    def start(env: dict[str, str]) -> BotProcess:
        bot = BotProcess(env, tmp_path, "serve")
        started.append(bot)
        bot.wait_listening()
        return bot

    yield start
    for bot in started:
        bot.kill()
