"""Test-wide guards: loopback only, no ambient configuration, no metadata-server probes."""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import Iterator

import pytest

from tests.fakes.mcp_servers import FakeDeveloperKnowledge, FakePay

# google-auth probes the GCE metadata server when nothing else is configured; point it at a
# closed loopback port so a mistake fails fast instead of leaving the machine.
os.environ["GCE_METADATA_HOST"] = "127.0.0.1:9"
os.environ["GCE_METADATA_IP"] = "127.0.0.1:9"
os.environ["NO_GCE_CHECK"] = "True"

_CONFIG_VARS = (
    "SLACK_BOT_TOKEN",
    "SLACK_SIGNING_SECRET",
    "SLACK_APP_TOKEN",
    "SLACK_API_URL",
    "GOOGLE_API_KEY",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "GOOGLE_CLOUD_PROJECT",
    "DEVELOPER_KNOWLEDGE_MCP_URL",
    "PAY_MCP_URL",
    "MCP_TIMEOUT_SECONDS",
    "PORT",
    "LOG_FORMAT",
    "LOG_LEVEL",
)

_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


def _is_loopback(address: object) -> bool:
    if isinstance(address, str):  # AF_UNIX path
        return True
    if not isinstance(address, tuple) or not address:
        return False
    host = address[0]
    if host in ("localhost",):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _guarded_connect(self: socket.socket, address: object) -> None:
    if not _is_loopback(address):
        raise ConnectionRefusedError(f"tests may only reach loopback, not {address!r}")
    _real_connect(self, address)  # type: ignore[arg-type]


def _guarded_connect_ex(self: socket.socket, address: object) -> int:
    if not _is_loopback(address):
        raise ConnectionRefusedError(f"tests may only reach loopback, not {address!r}")
    return _real_connect_ex(self, address)  # type: ignore[arg-type]


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
