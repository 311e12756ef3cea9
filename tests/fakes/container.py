"""Run the built container image with podman or docker and talk to it over loopback.

`ContainerBot` is a `BotProcess` whose process is `podman run …` (or `docker run …`) in the
foreground: the bot's output is the engine's, `wait_listening`/`wait_ready`/`get` work the
same, and its exit status is the container's. The container shares the host's network, so
the bot reaches the tests' loopback fakes and the tests reach the bot on 127.0.0.1. Its root
filesystem is read-only (no tmpfs either) and a named volume is mounted at /data, as in
production; the tests' loopback guard (`tests/sitecustomize`) is mounted read-only and put on
PYTHONPATH, so the bot in the container cannot leave the machine either.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.fakes.bot_process import NO_METADATA, SOCKET_GUARD_DIR, BotProcess

#: where the loopback guard is mounted in the container
GUARD_MOUNT = "/opt/gdocs-test-loopback-guard"
#: what podman needs on these machines (see ../shared/tools/container); GDOCS_PODMAN_OPTIONS
#: replaces it (an empty value: none)
DEFAULT_PODMAN_OPTIONS = "--runtime runc --cgroup-manager cgroupfs"
PODMAN_LIMITS = ("--ulimit", "nofile=20000:20000", "--ulimit", "nproc=4096:4096")
#: bound of every engine command that is not the bot itself
ENGINE_TIMEOUT = 60.0


@dataclass(frozen=True)
class Engine:
    """The container engine's command line: `podman [options]` or `docker`."""

    argv: tuple[str, ...]

    @property
    def is_podman(self) -> bool:
        return Path(self.argv[0]).name == "podman"

    def command(
        self, *args: str, timeout: float = ENGINE_TIMEOUT
    ) -> subprocess.CompletedProcess[str]:
        """Run an engine command to completion (bounded), never raising on its exit status."""
        return subprocess.run(
            [*self.argv, *args],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    @property
    def run_options(self) -> tuple[str, ...]:
        """Options every `run` needs with this engine (podman here: lowered ulimits)."""
        return PODMAN_LIMITS if self.is_podman else ()

    def inspect_image(self, image: str) -> dict[str, Any]:
        """`image inspect` of `image` (raises LookupError when the engine has no such image)."""
        result = self.command("image", "inspect", image)
        if result.returncode != 0:
            raise LookupError(result.stderr.strip() or f"no image {image}")
        (found,) = json.loads(result.stdout)
        assert isinstance(found, dict)
        return found

    def healthcheck_command(self, image: str) -> list[str]:
        """The image's HEALTHCHECK as a command line for `exec` (docker reports it in Config,
        podman beside it); AssertionError when the image has none."""
        found = self.inspect_image(image)
        check = (found.get("Config") or {}).get("Healthcheck") or found.get("Healthcheck")
        assert isinstance(check, dict), f"{image} has no HEALTHCHECK"
        kind, *command = check["Test"]
        if kind == "CMD-SHELL":
            return ["/bin/sh", "-c", *command]
        assert kind == "CMD", check
        return list(command)


def find_engine() -> Engine | str:
    """podman (or docker when GDOCS_CONTAINER_ENGINE=docker, or when podman is absent), or a
    sentence saying why there is none."""
    wanted = os.environ.get("GDOCS_CONTAINER_ENGINE") or (
        "podman" if shutil.which("podman") else "docker"
    )
    path = shutil.which(wanted)
    if path is None:
        return f"GDOCS_IMAGE is set but there is no {wanted!r} on PATH (GDOCS_CONTAINER_ENGINE)"
    if Path(path).name != "podman":
        return Engine((path,))
    options = os.environ.get("GDOCS_PODMAN_OPTIONS", DEFAULT_PODMAN_OPTIONS)
    return Engine((path, *shlex.split(options)))


def free_port() -> int:
    """A loopback port nobody listens on right now (the bot binds it a moment later)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def unique_name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


class ContainerBot(BotProcess):
    """`IMAGE` running its own CMD (`gdocs-bot serve`) in the foreground."""

    def __init__(
        self, engine: Engine, image: str, env: dict[str, str], *, volume: str, cwd: Path
    ) -> None:
        self.engine = engine
        self.name = unique_name("gdocs-image-test")
        settings = {**NO_METADATA, **env, "PYTHONPATH": GUARD_MOUNT}
        argv = [
            *engine.argv,
            "run",
            "--rm",
            "--name",
            self.name,
            "--network",
            "host",
            "--read-only",
            # the engine's own HEALTHCHECK scheduler (systemd timers for podman) is not
            # under test: the tests run the image's health check command themselves
            "--no-healthcheck",
            "--volume",
            f"{volume}:/data",
            "--volume",
            f"{SOCKET_GUARD_DIR}:{GUARD_MOUNT}:ro",
        ]
        if engine.is_podman:
            # podman mounts a writable tmpfs on /tmp, /var/tmp and /run under --read-only
            # unless told not to; docker does not: both must show the bot needs none
            argv.append("--read-only-tmpfs=false")
        argv += engine.run_options
        # `-e NAME` takes the value from the engine's environment: no value on a command line
        for key in settings:
            argv += ["--env", key]
        argv.append(image)
        self._spawn(argv, {**os.environ, **settings}, cwd)
        self.port = int(env["PORT"])

    def signal(self, signum: int = signal.SIGTERM) -> None:
        """Deliver `signum` to the bot (the container's PID 1) through the engine."""
        result = self.engine.command("kill", "--signal", signal.Signals(signum).name, self.name)
        assert result.returncode == 0, result.stderr

    def exec(
        self, *command: str, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        """Run `command` inside the running container (as the image's user)."""
        extra = [arg for key, value in (env or {}).items() for arg in ("--env", f"{key}={value}")]
        return self.engine.command("exec", *extra, self.name, *command)

    def kill(self) -> None:
        """Remove the container if it still runs (it was started with --rm), then release
        the engine process's pipes."""
        if self.proc.poll() is None:
            now = ("--time", "0") if self.engine.is_podman else ()  # docker's -f kills at once
            self.engine.command("rm", "--force", *now, self.name)
        super().kill()
