"""The MCP transport over TLS, on a loopback https server with a certificate made here: it
verifies the server (a certificate nobody vouches for is refused), and uses the TLS context
it is given."""

from __future__ import annotations

import datetime as dt
import ipaddress
import ssl
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from aiohttp import web
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from bot.upstream._aiohttp import AiohttpTransport


def _self_signed(directory: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 signed by its own key: (certificate, key) PEM files."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "gdocs-bot test")])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(hours=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


@pytest.fixture
async def https_url(tmp_path: Path) -> AsyncIterator[tuple[str, Path]]:
    cert, key = _self_signed(tmp_path)
    server_tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_tls.load_cert_chain(cert, key)

    async def hello(request: web.Request) -> web.Response:
        return web.json_response({"ok": True})

    app = web.Application()
    app.router.add_post("/mcp", hello)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=server_tls)
    await site.start()
    try:
        yield f"https://127.0.0.1:{runner.addresses[0][1]}/mcp", cert
    finally:
        await runner.cleanup()


async def test_a_server_certificate_nobody_vouches_for_is_refused(
    https_url: tuple[str, Path],
) -> None:
    """With the default trust (the CA bundle), a self-signed server is a connection error."""
    url, _ = https_url
    transport = AiohttpTransport(max_connections=2)
    async with httpx.AsyncClient(transport=transport, trust_env=False) as client:
        with pytest.raises(httpx.ConnectError):
            await client.post(url, json={})


async def test_the_tls_context_given_is_the_one_that_verifies(
    https_url: tuple[str, Path],
) -> None:
    """A context that trusts the server's certificate: the call goes through, over TLS."""
    url, cert = https_url
    trusting = ssl.create_default_context(cafile=str(cert))
    transport = AiohttpTransport(max_connections=2, ssl_context=trusting)
    async with httpx.AsyncClient(transport=transport, trust_env=False) as client:
        response = await client.post(url, json={})
    assert 200 == response.status_code
    assert {"ok": True} == response.json()
