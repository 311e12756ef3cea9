"""The built container image, run for real against the suite's loopback fakes: health and
readiness, a signed /gdocs question answered, SIGTERM with an answer in flight, a non-root
user, a read-only root filesystem with a /data volume, no installer in the image, a working
HEALTHCHECK, and the state store's file on /data.

Opt-in (building an image takes minutes): `GDOCS_IMAGE` names the image to run, e.g.
`GDOCS_IMAGE=$(../shared/tools/container build) scripts/dev test tests/test_image.py --no-cov`
(not `-k image`, which also picks render tests that need coverage on). The engine is podman,
or docker (`GDOCS_CONTAINER_ENGINE=docker`, or when podman is absent); the container uses the
host's network (Linux hosts: the fakes listen on 127.0.0.1)."""

from __future__ import annotations

import json
import os
import signal
import time
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from tests.fakes.bot_process import signed_slash_command
from tests.fakes.container import ContainerBot, Engine, find_engine, free_port, unique_name
from tests.fakes.mcp_servers import FakeDeveloperKnowledge, FakePay
from tests.fakes.slack_api import FakeSlack

IMAGE = os.environ.get("GDOCS_IMAGE", "")
BOT_TOKEN = "xoxb-4242-4343-ImageTestToken"
SIGNING_SECRET = "c0ffee5ecret0123456789abcdef0123"
API_KEY = "test-key"
QUESTION = "how do I create a Cloud Storage bucket?"
BOT_UID = 10001

pytestmark = [
    pytest.mark.skipif(
        not IMAGE,
        reason="set GDOCS_IMAGE=… to run; build one with ../shared/tools/container build",
    ),
    pytest.mark.timeout(180),
]


@pytest.fixture(scope="module")
def engine() -> Engine:
    """podman or docker, with the image present (asked for by GDOCS_IMAGE: a miss fails)."""
    found = find_engine()
    if isinstance(found, str):
        pytest.fail(found)
    try:
        found.inspect_image(IMAGE)
    except LookupError as missing:
        pytest.fail(f"GDOCS_IMAGE={IMAGE}: {missing}")
    return found


@pytest.fixture
def volume(engine: Engine) -> Iterator[str]:
    """A fresh named volume for /data (the engine copies the image's /data owner into it)."""
    name = unique_name("gdocs-image-test-data")
    created = engine.command("volume", "create", name)
    assert created.returncode == 0, created.stderr
    yield name
    engine.command("volume", "rm", "--force", name)


@pytest.fixture
def start_container(
    engine: Engine,
    volume: str,
    slack: FakeSlack,
    dk_server: FakeDeveloperKnowledge,
    pay_server: FakePay,
    tmp_path: Path,
) -> Iterator[Callable[..., ContainerBot]]:
    """Run the image in HTTP mode wired to the fakes; whatever still runs at the end is
    removed (also when the test failed)."""
    started: list[ContainerBot] = []

    def start(**overrides: str) -> ContainerBot:
        env = {
            "SLACK_BOT_TOKEN": BOT_TOKEN,
            "SLACK_SIGNING_SECRET": SIGNING_SECRET,
            "SLACK_API_URL": slack.url,
            "GOOGLE_API_KEY": API_KEY,
            "DEVELOPER_KNOWLEDGE_MCP_URL": dk_server.url,
            "PAY_MCP_URL": pay_server.url,
            "HOST": "127.0.0.1",
            "PORT": str(free_port()),
            "READINESS_PROBE_SECONDS": "1",
            "SHUTDOWN_GRACE_SECONDS": "10",
            **overrides,
        }
        bot = ContainerBot(engine, IMAGE, env, volume=volume, cwd=tmp_path)
        started.append(bot)
        bot.wait_listening(timeout=90)
        return bot

    yield start
    for bot in started:
        bot.kill()


def _ask(bot: ContainerBot, slack: FakeSlack, text: str = QUESTION) -> httpx.Response:
    body, headers = signed_slash_command(SIGNING_SECRET, text, slack.response_url("C1"))
    response = httpx.post(bot.url("/slack/events"), content=body, headers=headers, timeout=5)
    if response.status_code == 200:
        slack.acknowledged("C1", response.text)
    return response


# --- serving -------------------------------------------------------------------------------
def test_image_serves_healthz_and_turns_ready(start_container) -> None:
    """/healthz is 200 and /readyz reaches 200 once Slack and Developer Knowledge answered."""
    bot = start_container()
    health = bot.get("/healthz")
    assert 200 == health.status_code
    assert {"status": "ok"} == health.json()
    ready = bot.wait_ready(timeout=30)
    assert 200 == ready.status_code, ready.text
    assert ready.json()["ready"] is True


def test_image_answers_a_signed_slash_command(start_container, slack) -> None:
    """A signed /gdocs question is acknowledged and answered with chat.postMessage."""
    bot = start_container()
    bot.wait_ready(timeout=30)
    assert 200 == _ask(bot, slack).status_code

    (post,) = slack.wait_for("chat.postMessage", 1, timeout=30)
    assert "C1" == post.args["channel"]
    assert "create a Cloud Storage bucket" in post.args["text"]
    assert [] == slack.invalid_payloads
    assert BOT_TOKEN not in bot.output


def test_image_sigterm_posts_the_answer_in_flight_then_exits_0(
    start_container, slack, dk_server
) -> None:
    """SIGTERM to the container while answer_query is slow: the answer is still posted, and
    the container's exit status is 0 (the bot is PID 1 and handles the signal itself)."""
    bot = start_container()
    bot.wait_ready(timeout=30)
    dk_server.latency = 2.0  # this question is slow upstream
    assert 200 == _ask(bot, slack).status_code
    bot.wait_until(
        lambda: bool(dk_server.tool_calls("answer_query")), "the upstream call", timeout=30
    )

    bot.signal(signal.SIGTERM)
    stopped_at = time.monotonic()
    (post,) = slack.wait_for("chat.postMessage", 1, timeout=15)
    assert "create a Cloud Storage bucket" in post.args["text"]
    assert 0 == bot.wait(timeout=30)
    assert time.monotonic() - stopped_at < 10 + 5, "exit took longer than the grace period"
    assert "finishing 1 answer(s) in flight" in bot.output
    assert "Traceback" not in bot.output


# --- what the container is allowed to do ----------------------------------------------------
def test_image_runs_the_bot_as_uid_10001_not_root(start_container) -> None:
    """PID 1 is `gdocs-bot serve`, running as uid and gid 10001."""
    bot = start_container()
    status = bot.exec("cat", "/proc/1/status", "/proc/1/cmdline")
    assert status.returncode == 0, status.stderr
    fields = dict(line.split(":", 1) for line in status.stdout.splitlines() if ":" in line)
    real_uid, effective_uid, *_ = fields["Uid"].split()
    real_gid, effective_gid, *_ = fields["Gid"].split()
    assert [str(BOT_UID)] * 2 == [real_uid, effective_uid]
    assert [str(BOT_UID)] * 2 == [real_gid, effective_gid]
    assert "gdocs-bot\0serve" in status.stdout


def test_image_bot_can_write_only_to_data_on_a_read_only_root(start_container) -> None:
    """With --read-only and no tmpfs, the bot's user can write /data (the volume) and nowhere
    else: the working directory, /tmp, the venv and HOME are all refused, and the bot serves."""
    bot = start_container()
    probe = (
        "import json, os, tempfile\n"
        "out = {}\n"
        "for d in ('/data', os.getcwd(), '/tmp', '/opt/venv', os.path.expanduser('~')):\n"
        "    try:\n"
        "        with tempfile.NamedTemporaryFile(dir=d):\n"
        "            out[d] = 'writable'\n"
        "    except OSError as e:\n"
        "        out[d] = type(e).__name__\n"
        "print(json.dumps(out))\n"
    )
    result = bot.exec("python", "-c", probe)
    assert result.returncode == 0, result.stderr
    writable = {d for d, outcome in json.loads(result.stdout).items() if outcome == "writable"}
    assert {"/data"} == writable, result.stdout
    assert 200 == bot.get("/healthz").status_code


def test_image_declares_a_data_volume_owned_by_the_bot_with_state_url_in_it(engine) -> None:
    """VOLUME /data, owned by uid/gid 10001 in the image (a new volume inherits that), and
    STATE_URL pointing at a file there."""
    config = engine.inspect_image(IMAGE)["Config"]
    assert "/data" in (config.get("Volumes") or {})
    assert "STATE_URL=sqlite:////data/gdocs.db" in config["Env"]
    # no --volume: the engine makes an anonymous volume from the image's /data
    result = engine.command(
        "run",
        "--rm",
        "--network",
        "none",
        "--no-healthcheck",
        *engine.run_options,
        IMAGE,
        "python",
        "-c",
        "import os; s = os.stat('/data'); print(s.st_uid, s.st_gid)",
    )
    assert result.returncode == 0, result.stderr
    assert [BOT_UID, BOT_UID] == [int(n) for n in result.stdout.split()]


def test_image_labels_name_the_version_license_and_source(engine) -> None:
    """The OCI labels carry pyproject's version and license, a source URL and a title."""
    with open(Path(__file__).resolve().parents[1] / "pyproject.toml", "rb") as file:
        project = tomllib.load(file)["project"]
    labels = engine.inspect_image(IMAGE)["Config"].get("Labels") or {}
    assert project["version"] == labels.get("org.opencontainers.image.version")
    assert project["license"] == labels.get("org.opencontainers.image.licenses")
    assert labels.get("org.opencontainers.image.source", "").startswith("https://")
    assert "gdocs-bot" == labels.get("org.opencontainers.image.title")
    assert labels.get("org.opencontainers.image.description")


def test_image_carries_no_pip_setuptools_or_wheel(engine) -> None:
    """The bot's python (the venv on PATH) cannot import pip, setuptools, pkg_resources or
    wheel, and the venv has none of them: nothing in the image installs packages."""
    probe = (
        "import importlib.util, json, os, sys, sysconfig\n"
        "names = ('pip', 'setuptools', 'pkg_resources', 'wheel', '_distutils_hack')\n"
        "site = sysconfig.get_paths()['purelib']\n"
        "print(json.dumps({'prefix': sys.prefix,\n"
        "    'importable': [n for n in names if importlib.util.find_spec(n)],\n"
        "    'in_venv': sorted(f for f in os.listdir(site) if f.split('-')[0] in names),\n"
        "    'bin': sorted(f for f in os.listdir(sys.prefix + '/bin') if f.startswith('pip'))}))\n"
    )
    result = engine.command(
        "run",
        "--rm",
        "--network",
        "none",
        "--no-healthcheck",
        *engine.run_options,
        IMAGE,
        "python",
        "-c",
        probe,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert "/opt/venv" == report["prefix"]
    assert [] == report["importable"]
    assert [] == report["in_venv"]
    assert [] == report["bin"]


def test_image_healthcheck_command_passes_on_a_live_bot_and_fails_without_one(
    engine, start_container
) -> None:
    """The image's HEALTHCHECK command (no curl in slim) exits 0 against the running bot, and
    non-zero when nothing answers on PORT."""
    command = engine.healthcheck_command(IMAGE)
    bot = start_container()
    healthy = bot.exec(*command)
    assert 0 == healthy.returncode, healthy.stderr
    dead = bot.exec(*command, env={"PORT": str(free_port())})
    assert 0 != dead.returncode


# --- state ---------------------------------------------------------------------------------
def test_image_keeps_its_state_database_on_the_data_volume(start_container, slack) -> None:
    """After a question, the state store's SQLite file (the image's STATE_URL) is on /data.
    Fails until the bot reads STATE_URL (the state-store issue)."""
    bot = start_container()
    bot.wait_ready(timeout=30)
    assert 200 == _ask(bot, slack).status_code
    slack.wait_for("chat.postMessage", 1, timeout=30)

    probe = (
        "import sqlite3\n"
        "db = sqlite3.connect('file:/data/gdocs.db?mode=ro', uri=True)\n"
        "tables = \"select count(*) from sqlite_master where type = 'table'\"\n"
        "print(db.execute(tables).fetchone()[0])\n"
    )
    listing = bot.exec("ls", "-la", "/data")
    result = bot.exec("python", "-c", probe)
    assert result.returncode == 0, f"{result.stderr.strip()}\n/data:\n{listing.stdout}"
    assert int(result.stdout) >= 1, "gdocs.db has no table"
