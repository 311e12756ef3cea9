"""Loopback-only sockets for every Python subprocess the tests start.

The tests put this directory first on PYTHONPATH, so `site` imports this module at start-up
(after the `.pth` files, coverage's among them) and `socket.socket.connect`/`connect_ex`
refuse any address outside the loopback range, as `tests/conftest.py` does in-process: a
subprocess that tries to reach slack.com, googleapis.com or the metadata server fails loudly
instead of leaving the machine. Another `sitecustomize` further down sys.path (a distro's,
say) is still run, so shadowing it changes nothing else.

The pytest process imports it as `tests.sitecustomize.sitecustomize` for the same check;
only the start-up import (`__name__ == "sitecustomize"`) installs the guard for good.
"""

from __future__ import annotations

import importlib.util
import ipaddress
import os
import socket
import sys
from collections.abc import Callable
from importlib.machinery import PathFinder
from typing import Any

_HERE = os.path.dirname(os.path.abspath(__file__))
REFUSAL = "tests may only reach loopback"


def is_loopback(address: object) -> bool:
    """True for AF_UNIX paths, `localhost` and loopback IPv4/IPv6 addresses."""
    if isinstance(address, str | bytes):  # AF_UNIX path
        return True
    if not isinstance(address, tuple) or not address:
        return False
    host = address[0]
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def guarded(real: Callable[..., Any]) -> Callable[..., Any]:
    """`real` (socket.connect or connect_ex), refusing non-loopback addresses."""

    def connect(self: socket.socket, address: object) -> Any:
        if not is_loopback(address):
            raise ConnectionRefusedError(f"{REFUSAL}, not {address!r}")
        return real(self, address)

    connect.__name__ = real.__name__
    return connect


def install() -> None:
    socket.socket.connect = guarded(socket.socket.connect)  # type: ignore[method-assign]
    socket.socket.connect_ex = guarded(socket.socket.connect_ex)  # type: ignore[method-assign]


def _run_shadowed_sitecustomize() -> None:
    """Import the next `sitecustomize` on sys.path, the one this module hides."""
    rest = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]
    found = PathFinder.find_spec("sitecustomize", rest)
    if found is None or found.loader is None:
        return
    module = importlib.util.module_from_spec(found)
    found.loader.exec_module(module)


if __name__ == "sitecustomize":
    install()
    _run_shadowed_sitecustomize()
