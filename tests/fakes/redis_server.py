"""A real `redis-server` on 127.0.0.1 for the store's tests (no persistence, a free port).

    server = RedisServer(password="s3cret").start()
    ...
    server.stop()      # an outage
    server.start()     # back, on the same port
    server.kill()      # teardown

`require_redis_server()` skips the calling test when the binary is missing, unless
GDOCS_REQUIRE_REDIS=1 (CI), under which a missing binary fails it.
"""

from __future__ import annotations

import os
import shutil
import socket
import ssl
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.fakes.tls import self_signed

_READY_WITHIN = 10.0


def require_redis_server() -> str:
    """The path of `redis-server`; skip (or fail, under GDOCS_REQUIRE_REDIS=1) without it."""
    found = shutil.which("redis-server")
    if found is not None:
        return found
    if os.environ.get("GDOCS_REQUIRE_REDIS") == "1":
        pytest.fail("GDOCS_REQUIRE_REDIS=1 but redis-server is not on PATH")
    pytest.skip("redis-server is not on PATH (apt-get install redis-server to run these tests)")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class RedisServer:
    def __init__(self, *, password: str | None = None) -> None:
        self.binary = require_redis_server()
        self.password = password
        self.port = _free_port()
        self._dir = tempfile.mkdtemp(prefix="gdocs-redis-")
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        auth = f":{self.password}@" if self.password else ""
        return f"redis://{auth}127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
        """Start on `self.port` and return once it answers PING (bounded)."""
        if self._proc is not None:
            raise RuntimeError("redis-server is already running")
        command = [self.binary, "--port", str(self.port), "--bind", "127.0.0.1"]
        command += ["--save", "", "--appendonly", "no", "--dir", self._dir]
        command += ["--logfile", str(Path(self._dir) / "redis.log")]
        if self.password:
            command += ["--requirepass", self.password]
        self._proc = subprocess.Popen(command, stdin=subprocess.DEVNULL)
        self._wait_ready()
        return self

    def _wait_ready(self) -> None:
        assert self._proc is not None
        give_up = time.monotonic() + _READY_WITHIN
        while time.monotonic() < give_up:
            if self._answers():
                return
            try:  # a short wait that also notices a server that exited at once
                code = self._proc.wait(timeout=0.02)
            except subprocess.TimeoutExpired:
                continue
            raise RuntimeError(f"redis-server exited with {code}: {self._log_tail()}")
        self.kill()
        raise RuntimeError(f"redis-server did not answer within {_READY_WITHIN:g} s")

    def _answers(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as conn:
                conn.sendall(b"*1\r\n$4\r\nPING\r\n")
                reply = conn.recv(64)
        except OSError:
            return False
        # a password-protected server answers -NOAUTH: it is up all the same
        return reply.startswith((b"+PONG", b"-NOAUTH"))

    def _log_tail(self) -> str:
        log = Path(self._dir) / "redis.log"
        return log.read_text(errors="replace")[-500:] if log.exists() else "(no log)"

    def command(self, *args: str) -> bytes:
        """Send one command (RESP) and return the raw reply, e.g. FLUSHALL."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=2) as conn:
            if self.password:
                conn.sendall(_resp(["AUTH", self.password]))
                conn.recv(64)
            conn.sendall(_resp(list(args)))
            return conn.recv(65536)

    def flush(self) -> None:
        reply = self.command("FLUSHALL")
        if not reply.startswith(b"+OK"):
            raise RuntimeError(f"FLUSHALL failed: {reply!r}")

    def stop(self) -> None:
        """Stop the server (an outage); `start()` brings it back on the same port."""
        if self._proc is None:
            return
        self._proc.terminate()
        try:
            self._proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait(timeout=5)
        self._proc = None

    def kill(self) -> None:
        if self._proc is not None:
            self._proc.kill()
            self._proc.wait(timeout=5)
            self._proc = None
        shutil.rmtree(self._dir, ignore_errors=True)


def _resp(parts: list[str]) -> bytes:
    out = [f"*{len(parts)}\r\n".encode()]
    for part in parts:
        data = part.encode()
        out.append(b"$%d\r\n%s\r\n" % (len(data), data))
    return b"".join(out)


def _answers_over_tls(port: int, ca: Path) -> bool:
    context = ssl.create_default_context(cafile=str(ca))
    try:
        with (
            socket.create_connection(("127.0.0.1", port), timeout=0.5) as raw,
            context.wrap_socket(raw, server_hostname="127.0.0.1") as conn,
        ):
            conn.sendall(b"*1\r\n$4\r\nPING\r\n")
            return conn.recv(16).startswith(b"+PONG")
    except OSError:
        return False


@contextmanager
def tls_redis_server(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    """A redis-server serving TLS only, on a free port: (port, its CA certificate). Skips
    when this redis-server was built without TLS."""
    binary = require_redis_server()
    cert, key = self_signed(tmp_path)
    port = _free_port()
    command = [binary, "--port", "0", "--tls-port", str(port), "--bind", "127.0.0.1"]
    command += ["--tls-cert-file", str(cert), "--tls-key-file", str(key)]
    command += ["--tls-ca-cert-file", str(cert), "--tls-auth-clients", "no"]
    command += ["--save", "", "--appendonly", "no", "--dir", str(tmp_path)]
    proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    try:
        give_up = time.monotonic() + 10
        while not _answers_over_tls(port, cert):
            if time.monotonic() > give_up:
                raise RuntimeError("redis-server with TLS did not answer within 10 s")
            try:  # a short wait that also notices a server that exited (built without TLS)
                code = proc.wait(timeout=0.05)
            except subprocess.TimeoutExpired:
                continue
            pytest.skip(f"this redis-server does not serve TLS (it exited with {code})")
        yield port, cert
    finally:
        proc.kill()
        proc.wait(timeout=5)
