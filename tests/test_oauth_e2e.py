"""Issue 43's installs in several workspaces, end to end over signed loopback requests: Bolt's
OAuth flow (GET /slack/install, then /slack/oauth_redirect with the state cookie, the fake
Slack answering oauth.v2.access) installs two workspaces, each answered with its own token;
the installs survive a restart on SQLite and are shared by two replicas on one Redis; an
uninstall deletes that workspace's tokens and channel settings; no secret is ever logged."""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import re
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml
from cryptography.fernet import Fernet

from bot import tenant
from bot.observability.logging import configure_logging
from bot.render import NOT_INSTALLED
from bot.slack.app import EVENTS_PATH, run_recovery
from bot.slack.memory import ChannelSettings
from bot.slack.oauth import BOT_SCOPES
from tests.fakes.bot_process import BotProcess
from tests.fakes.mcp_servers import FakeDeveloperKnowledge
from tests.fakes.redis_server import RedisServer
from tests.fakes.slack_api import BOT_USER_ID, FakeSlack
from tests.fakes.socket_mode import FakeSocketMode
from tests.slack_harness import ASKER, SlackBot, running_bot

CLIENT_SECRET = "client-secret-3c1d9e7a5b"
STATE_SECRET = "state-secret-8f2e4a6c0b9d1e3f"
ENCRYPTION_KEY = Fernet.generate_key().decode()
OAUTH: dict[str, Any] = {
    "slack_bot_token": None,
    "slack_client_id": "1111.2222",
    "slack_client_secret": CLIENT_SECRET,
    "slack_state_secret": STATE_SECRET,
    "slack_token_encryption_key": ENCRYPTION_KEY,
}
#: each workspace's channel (Slack's channel ids are unique across workspaces)
CHANNEL = {"T1": "C1", "T2": "C2", "T3": "C3"}
ROOT = Path(__file__).resolve().parents[1]


@asynccontextmanager
async def oauth_bot(
    dk: FakeDeveloperKnowledge, fake: FakeSlack, **overrides: Any
) -> AsyncIterator[SlackBot]:
    async with running_bot(dk, fake=fake, **OAUTH, **overrides) as bot:
        yield bot


def base_url(bot: SlackBot) -> str:
    return bot.url.removesuffix(EVENTS_PATH)


async def install(bot: SlackBot, team: str) -> str:
    """Install the app in `team` as a browser does; the bot token Slack gave it."""
    code, token = bot.fake.install_code(team)
    await redirect(bot, code)
    return token


async def redirect(bot: SlackBot, code: str) -> None:
    """The install page, then Slack's redirect back with `code` and the page's state."""
    async with bot.session.get(base_url(bot) + "/slack/install") as page:
        assert 200 == page.status
        cookie = page.headers["Set-Cookie"].split(";")[0]  # slack-app-oauth-state=…
        state = re.search(r"state=([^&\"']+)", await page.text())
    assert state is not None
    async with bot.session.get(
        base_url(bot) + "/slack/oauth_redirect",
        params={"code": code, "state": state.group(1)},
        headers={"Cookie": cookie},
    ) as done:
        assert 200 == done.status, await done.text()


def event_body(team: str, event: dict[str, Any], org: str | None = None) -> str:
    """An Events API callback from `team` (of Grid organisation `org`, installed org-wide)."""
    installed = {"team_id": None if org else team, "enterprise_id": org}
    return json.dumps(
        {
            "team_id": team,
            "enterprise_id": org,
            "is_ext_shared_channel": False,
            "api_app_id": "A1",
            "type": "event_callback",
            "event_id": f"Ev{team}{time.time_ns()}",
            "event_time": int(time.time()),
            "authorizations": [
                {
                    **installed,
                    "user_id": BOT_USER_ID,
                    "is_bot": True,
                    "is_enterprise_install": org is not None,
                }
            ],
            "event": event,
        }
    )


async def mention(
    bot: SlackBot, team: str, text: str = "how do I create a bucket?", org: str | None = None
) -> int:
    ts = f"{time.time():.6f}"
    event = {
        "type": "app_mention",
        "user": ASKER,
        "team": team,
        "user_team": team,
        "text": f"<@{BOT_USER_ID}> {text}",
        "ts": ts,
        "event_ts": ts,
        "channel": CHANNEL[team],
    }
    sent = await bot.post_signed(event_body(team, event, org), content_type="application/json")
    return sent.status


async def answered_with(bot: SlackBot, team: str) -> set[str]:
    """Mention the bot in `team`, wait for its answer: the tokens its replies there used."""
    done = len(bot.metrics.finished)
    assert 200 == await mention(bot, team)
    await bot.finished(done + 1)
    posted = [
        c for c in bot.fake.calls_to("chat.postMessage") if c.args["channel"] == CHANNEL[team]
    ]
    assert posted, f"no answer in {team}"
    return {c.token for c in bot.fake.calls if c.args.get("channel") == CHANNEL[team]}


async def uninstall(bot: SlackBot, team: str, org: str | None = None) -> None:
    event = {"type": "app_uninstalled", "event_ts": f"{time.time():.6f}"}
    sent = await bot.post_signed(event_body(team, event, org), content_type="application/json")
    assert 200 == sent.status


@pytest.fixture
def logged(capsys: pytest.CaptureFixture[str]) -> Iterator[Any]:
    """The bot's own log handler at DEBUG; what it wrote, as one string."""
    root = logging.getLogger()
    saved_handlers, saved_level = list(root.handlers), root.level
    names = [n for n in logging.root.manager.loggerDict if n.startswith(("slack_", "bot"))]
    saved = {n: logging.getLogger(n).level for n in [*names, "slack_sdk", "slack_bolt"]}
    yield lambda: capsys.readouterr().err
    root.handlers[:] = saved_handlers
    root.setLevel(saved_level)
    for name, level in saved.items():
        logging.getLogger(name).setLevel(level)


async def test_two_workspaces_installed_by_oauth_are_each_answered_with_their_own_token(
    dk_server: FakeDeveloperKnowledge, slack: FakeSlack, logged: Any
) -> None:
    """Installed through the install page and the redirect, T1 and T2 are answered with the
    token Slack gave each; uninstalled, T1's token and channel settings are gone and its next
    mention is refused, while T2 is still answered. At DEBUG, no secret reaches the log."""
    async with oauth_bot(dk_server, slack, log_level="DEBUG") as bot:
        configure_logging(bot.deps.settings)
        token1, token2 = await install(bot, "T1"), await install(bot, "T2")
        app = base64.b64encode(f"{OAUTH['slack_client_id']}:{CLIENT_SECRET}".encode()).decode()
        exchanges = slack.calls_to("oauth.v2.access")  # the app's credentials, never in the URL
        assert [f"Basic {app}"] * 2 == [c.headers.get("authorization") for c in exchanges]
        assert {token1} == await answered_with(bot, "T1")
        assert {token2} == await answered_with(bot, "T2")
        assert {token2} == await answered_with(bot, "T2")
        # auth.test once when installed (Bolt's flow), once when first authorized: cached
        assert 2 == len([c for c in slack.calls_to("auth.test") if c.token == token2])

        await bot.command("channel auto", channel="C1")  # the form's team is T1
        with tenant.running_for("T1"):
            assert ChannelSettings() != await bot.deps.channels.stored("C1")
        await uninstall(bot, "T1")
        assert bot.deps.installs is not None
        assert await bot.deps.installs.installations.find_by_key("T1") is None
        with tenant.running_for("T1"):
            assert ChannelSettings() == await bot.deps.channels.stored("C1")
        calls = len(slack.calls)
        await mention(bot, "T1")
        await asyncio.sleep(0.2)
        after = slack.calls[calls:]
        assert [] == [c.method for c in after if token1 in (c.token, c.args.get("token"))]
        assert [] == [c.method for c in after if c.args.get("channel") == CHANNEL["T1"]]
        assert {token2} == await answered_with(bot, "T2")

    log = logged()
    assert "oauth.v2.access" in log  # the capture saw the whole flow
    assert "uninstalled: its tokens and settings deleted" in log
    for secret in ("xoxb-", CLIENT_SECRET, STATE_SECRET, ENCRYPTION_KEY):
        assert secret not in log


async def test_installs_survive_a_restart_and_resumed_work_keeps_its_workspaces_token(
    dk_server: FakeDeveloperKnowledge,
    slack: FakeSlack,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """On one SQLite file, a restarted bot answers T1 without a reinstall; a T2 question
    acknowledged just before the stop is finished with T2's token, and one from T3, which
    uninstalled meanwhile, is dropped unanswered."""
    url = f"sqlite:///{tmp_path}/state.db"
    quick = {"state_url": url, "work_lease_seconds": 0.5, "work_recovery_seconds": 0.2}
    async with oauth_bot(dk_server, slack, **quick) as first:
        token1 = await install(first, "T1")
        token2 = await install(first, "T2")
        await install(first, "T3")
        # the process stops right after acknowledging: the work is recorded, never started
        monkeypatch.setattr(first.deps.inflight, "spawn", lambda work: work.close())
        assert 200 == await mention(first, "T2", "how do I deploy to Cloud Run?")
        assert 200 == await mention(first, "T3", "how do I deploy to Cloud Run?")
        await uninstall(first, "T3")
    assert [] == slack.calls_to("chat.postMessage")

    async with oauth_bot(dk_server, slack, **quick) as second:
        await asyncio.sleep(0.6)  # the stopped process's lease runs out
        recovery = asyncio.create_task(run_recovery(second.deps, second.app.client))
        try:
            resumed = await slack.await_calls("chat.postMessage")
            await second.finished(1)
            async with asyncio.timeout(5):  # T3's drop is a log line: no event to wait on
                while "dropped unfinished work (uninstalled)" not in caplog.text:  # noqa: ASYNC110
                    await asyncio.sleep(0.05)
        finally:
            recovery.cancel()
        assert {token2} == {c.token for c in resumed}
        assert [CHANNEL["T2"]] == [c.args["channel"] for c in resumed]
        assert {token1} == await answered_with(second, "T1")  # not installed again


async def test_a_revoked_bot_token_is_deleted_and_its_workspace_refused(
    dk_server: FakeDeveloperKnowledge, slack: FakeSlack
) -> None:
    """tokens_revoked naming the bot deletes T1's installation; T1's next mention makes no
    Slack call, T2 is still answered with its own token."""
    async with oauth_bot(dk_server, slack) as bot:
        await install(bot, "T1")
        token2 = await install(bot, "T2")
        event = {"type": "tokens_revoked", "tokens": {"oauth": [], "bot": [BOT_USER_ID]}}
        sent = await bot.post_signed(event_body("T1", event), content_type="application/json")
        assert 200 == sent.status
        assert bot.deps.installs is not None
        assert await bot.deps.installs.installations.find_by_key("T1") is None
        calls = len(slack.calls)
        await mention(bot, "T1")
        await asyncio.sleep(0.2)
        assert [] == [c.method for c in slack.calls[calls:]]
        assert {token2} == await answered_with(bot, "T2")


async def test_an_org_wide_install_answers_each_workspace_of_the_org_with_its_token(
    dk_server: FakeDeveloperKnowledge, slack: FakeSlack
) -> None:
    """Installed org-wide on Grid organisation E1 (one token), mentions from two of its
    workspaces are both answered with that token; uninstalled, neither is answered."""
    async with oauth_bot(dk_server, slack) as bot:
        code, token = slack.install_code(None, enterprise="E1", org_wide=True)
        await redirect(bot, code)
        for team in ("T1", "T2"):
            done = len(bot.metrics.finished)
            assert 200 == await mention(bot, team, org="E1")
            await bot.finished(done + 1)
            used = {c.token for c in slack.calls if c.args.get("channel") == CHANNEL[team]}
            assert {token} == used

        await uninstall(bot, "T2", org="E1")  # an org-wide uninstall names one workspace too
        assert bot.deps.installs is not None
        assert await bot.deps.installs.installations.find_by_key("E1") is None
        calls = len(slack.calls)
        await mention(bot, "T1", org="E1")
        await asyncio.sleep(0.2)
        assert [] == [c.method for c in slack.calls[calls:]]


async def test_two_replicas_on_one_redis_share_the_installs(
    dk_server: FakeDeveloperKnowledge, slack: FakeSlack, redis_server: RedisServer
) -> None:
    """Installed through replica A, T1 is answered by replica B with T1's token."""
    async with (
        oauth_bot(dk_server, slack, state_url=redis_server.url) as a,
        oauth_bot(dk_server, slack, state_url=redis_server.url) as b,
    ):
        token1 = await install(a, "T1")
        assert {token1} == await answered_with(b, "T1")


async def test_a_forged_code_a_missing_cookie_or_a_spent_state_installs_nothing(
    dk_server: FakeDeveloperKnowledge, slack: FakeSlack, logged: Any
) -> None:
    """Slack's redirect forged or replayed gets Bolt's failure page and saves nothing: the
    page's state without its cookie, a code Slack never gave, then the state already spent
    with a real code. Neither the pages nor the log (at DEBUG) hold a secret, and the forged
    code is logged at DEBUG only."""
    async with oauth_bot(dk_server, slack, log_level="DEBUG") as bot:
        configure_logging(bot.deps.settings)
        real, _ = slack.install_code("T1")
        async with bot.session.get(base_url(bot) + "/slack/install") as page:
            cookie = page.headers["Set-Cookie"].split(";")[0]
            found = re.search(r"state=([^&\"']+)", await page.text())
        assert found is not None
        pages = []
        for code, headers in (
            (real, {}),  # a link sent to someone else: not the browser that opened the page
            ("forged\n2026-12-06 ERROR forged line", {"Cookie": cookie}),  # spends the state
            (real, {"Cookie": cookie}),
        ):
            query = {"code": code, "state": found.group(1)}
            async with bot.session.get(
                base_url(bot) + "/slack/oauth_redirect", params=query, headers=headers
            ) as done:
                assert done.status >= 400
                pages.append(await done.text())
        assert bot.deps.installs is not None
        assert 0 == await bot.deps.installs.installations.count()
        assert [] == [c for c in slack.calls_to("oauth.v2.access") if c.args.get("code") == real]

    log = logged()
    for text in (*pages, log):
        for secret in ("xoxb-", CLIENT_SECRET, STATE_SECRET, ENCRYPTION_KEY):
            assert secret not in text
    # the forged code is anyone's text: not above DEBUG, where it could forge a line
    assert "an install's oauth.v2.access failed: " in log
    assert [] == [line for line in log.splitlines() if "forged" in line and " DEBUG " not in line]


async def test_a_command_from_a_workspace_not_installed_says_so_not_slack_bot_token(
    dk_server: FakeDeveloperKnowledge, slack: FakeSlack, caplog: pytest.LogCaptureFixture
) -> None:
    """In OAuth mode there is no SLACK_BOT_TOKEN to check: /gdocs from a workspace whose
    installation is not found is told the app is not installed there, and nothing else.
    The log says so at WARNING, not as Bolt's ERROR at each request."""
    async with oauth_bot(dk_server, slack) as bot:
        await install(bot, "T2")
        calls = len(slack.calls)
        with caplog.at_level(logging.INFO):
            sent = await bot.command("help", team="T1")
        said_in_log = [
            (r.levelname, r.getMessage()) for r in caplog.records if r.levelno >= logging.WARNING
        ]
        assert [
            ("WARNING", "a request from a workspace with no installation here: not answered")
        ] == said_in_log
        assert 200 == sent.status
        said = [body.get("text") for key, body in slack.responses if key == sent.key]
        assert [NOT_INSTALLED] == said
        assert [] == [c.method for c in slack.calls[calls:]]  # no Web API call at all


async def test_one_token_mode_serves_no_install_page(
    dk_server: FakeDeveloperKnowledge, slack: FakeSlack
) -> None:
    """With SLACK_BOT_TOKEN (the default), /slack/install and the redirect are not found."""
    async with running_bot(dk_server, fake=slack, slack_client_id="1111.2222") as bot:
        for path in ("/slack/install", "/slack/oauth_redirect"):
            async with bot.session.get(base_url(bot) + path) as resp:
                assert 404 == resp.status


def test_an_install_asks_for_the_manifests_bot_scopes() -> None:
    manifest = yaml.safe_load((ROOT / "manifest.yml").read_text(encoding="utf-8"))
    assert sorted(BOT_SCOPES) == sorted(manifest["oauth_config"]["scopes"]["bot"])


@pytest.mark.timeout(60)
@pytest.mark.parametrize("mode", ["http", "socket"])
def test_serve_in_oauth_mode_is_ready_without_auth_test_and_serves_the_install_page(
    mode: str, dk_server: FakeDeveloperKnowledge, tmp_path: Path
) -> None:
    """`gdocs-bot serve` with SLACK_CLIENT_ID and no bot token: one line says the mode, no
    auth.test is made, /readyz turns 200 and /slack/install is served (Socket Mode too)."""
    socket = FakeSocketMode().start() if mode == "socket" else None
    slack = FakeSlack()
    slack.socket_url = socket.url if socket else None
    slack.start()
    env = {
        "SLACK_CLIENT_ID": "1111.2222",
        "SLACK_CLIENT_SECRET": CLIENT_SECRET,
        "SLACK_STATE_SECRET": STATE_SECRET,
        "SLACK_TOKEN_ENCRYPTION_KEY": ENCRYPTION_KEY,
        "SLACK_API_URL": slack.url,
        "GOOGLE_API_KEY": "test-key",
        "DEVELOPER_KNOWLEDGE_MCP_URL": dk_server.url,
        "HOST": "127.0.0.1",
        "PORT": "0",
        "READINESS_PROBE_SECONDS": "1",
        "STATE_URL": f"sqlite:///{tmp_path / 'state.db'}",
        **({"SLACK_APP_TOKEN": "xapp-1-A0001-4242-SocketModeToken"} if socket else {}),
        **({} if socket else {"SLACK_SIGNING_SECRET": "c0ffee5ecret0123456789abcdef0123"}),
    }
    process = BotProcess(env, tmp_path, "serve")
    try:
        process.wait_listening()
        assert 200 == process.wait_ready().status_code
        page = process.get("/slack/install")
        assert 200 == page.status_code
        assert "slack-app-oauth-state=" in page.headers["set-cookie"]
        process.wait_for_line("installs by OAuth")
        assert [] == slack.calls_to("auth.test")
    finally:
        process.kill()
        slack.stop()
        if socket:
            socket.stop()
