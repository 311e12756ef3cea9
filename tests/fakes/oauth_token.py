"""A fake Google OAuth token endpoint (aiohttp, on loopback) and service-account key files.

`FakeTokenServer.service_account_file(dir)` writes a real service-account JSON key (a fresh
RSA key made with `cryptography`) whose `token_uri` points here. The endpoint verifies the
JWT-bearer assertion against that key, as Google does, and hands out the tokens in `tokens`
in turn (then `token-N`), each valid for `expires_in` seconds.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from pathlib import Path
from typing import Any

from aiohttp import web
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from google.auth import jwt

from tests.fakes.serving import ThreadedServer

SA_EMAIL = "gdocs-bot@test-project.iam.gserviceaccount.com"


class FakeTokenServer:
    def __init__(self) -> None:
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.private_pem = key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ).decode()
        self.public_pem = (
            key.public_key()
            .public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            )
            .decode()
        )
        #: tokens handed out in order; afterwards `token-<n>`
        self.tokens: deque[str] = deque()
        self.expires_in = 3600
        #: answer the next requests with this OAuth error (e.g. "invalid_grant")
        self.fail_with: str | None = None
        #: decoded claims of every accepted assertion
        self.grants: list[dict[str, Any]] = []
        self.requests = 0
        self._lock = threading.Lock()
        app = web.Application()
        app.router.add_post("/token", self._token)
        self._server = ThreadedServer(app)

    def start(self) -> FakeTokenServer:
        self._server.start()
        return self

    def stop(self) -> None:
        self._server.stop()

    @property
    def token_uri(self) -> str:
        return f"{self._server.base_url}/token"

    def service_account_file(self, directory: Path) -> Path:
        info = {
            "type": "service_account",
            "project_id": "test-project",
            "private_key_id": "key-1",
            "private_key": self.private_pem,
            "client_email": SA_EMAIL,
            "client_id": "1234567890",
            "token_uri": self.token_uri,
        }
        path = directory / "service-account.json"
        path.write_text(json.dumps(info), encoding="utf-8")
        return path

    async def _token(self, request: web.Request) -> web.Response:
        form = await request.post()
        with self._lock:
            self.requests += 1
        if self.fail_with:
            return web.json_response(
                {"error": self.fail_with, "error_description": "Invalid JWT Signature."}, status=400
            )
        if form.get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer":
            return web.json_response({"error": "unsupported_grant_type"}, status=400)
        try:
            # google-auth addresses the assertion to Google's token URI whatever token_uri says
            audience = ["https://oauth2.googleapis.com/token", self.token_uri]
            claims = jwt.decode(
                str(form.get("assertion")), certs=self.public_pem, audience=audience
            )
        except ValueError:
            return web.json_response({"error": "invalid_grant"}, status=400)
        with self._lock:
            self.grants.append(claims)
            token = self.tokens.popleft() if self.tokens else f"token-{self.requests}"
        return web.json_response(
            {"access_token": token, "expires_in": self.expires_in, "token_type": "Bearer"}
        )
