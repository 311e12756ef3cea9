"""OAuth installs kept in the state store (bot.slack.installs): on a real SQLite file (a
restart finds them), one real redis-server shared by two replicas, and memory; encrypted at
rest (no token, no team name in the stored bytes), readable after a key rotation, nothing
found (and no secret logged) under a wrong key; org-wide installs found from any workspace of
the organisation; uninstalls remove that installation only; the install page's state usable
once; what OAuth mode's settings lack."""

from __future__ import annotations

import json
import logging
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import redis
from cryptography.fernet import Fernet
from slack_bolt.error import BoltError
from slack_sdk.oauth.installation_store.models.installation import Installation

from bot import keys
from bot.errors import ConfigError
from bot.settings import Settings
from bot.slack import installs
from bot.slack.installs import StoreInstallations, StoreOAuthStates, TokenCipher
from bot.store import TEXT, MemoryStore, ResilientStore, SqliteStore, Store, redis_store
from tests.fakes.mcp_servers import FakeDeveloperKnowledge
from tests.fakes.redis_server import RedisServer
from tests.store_backends import FakeClock
from tests.test_cli import gdocs

KEY, OLD_KEY = Fernet.generate_key().decode(), Fernet.generate_key().decode()
TOKEN = "xoxb-1111-secret-token-of-acme"
TEAM_NAME = "Acme Rocket Works"
STATE_SECRET = "a-state-secret-of-32-characters!"


def installation(
    team: str | None = "T1",
    *,
    token: str = TOKEN,
    enterprise: str | None = None,
    org_wide: bool = False,
    team_name: str | None = TEAM_NAME,
) -> Installation:
    return Installation(
        app_id="A1",
        enterprise_id=enterprise,
        enterprise_name="Acme Holdings" if enterprise else None,
        team_id=None if org_wide else team,
        team_name=None if org_wide else team_name,
        bot_token=token,
        bot_id="B1",
        bot_user_id="U0BOT",
        bot_scopes="app_mentions:read,chat:write",
        user_id="U0INSTALLER",
        user_token="xoxp-user-token-we-never-keep",
        is_enterprise_install=org_wide,
    )


def kept(store: Store, key: str = KEY) -> StoreInstallations:
    return StoreInstallations(store, TokenCipher.from_setting(key))


async def sqlite_at(path: Path) -> SqliteStore:
    # as the bot opens it: installs are never evicted past a namespace's bound
    return await SqliteStore.open(path, max_entries=2, unevicted=keys.UNEVICTED)


@pytest.fixture(params=["memory", "sqlite", "redis"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    opened: Store
    if request.param == "memory":
        opened = MemoryStore(max_entries=2, unevicted=keys.UNEVICTED)
    elif request.param == "sqlite":
        opened = await sqlite_at(tmp_path / "state.db")
    else:
        server = request.getfixturevalue("redis_server")
        opened = redis_store(server.url, prefix="gdocs:")
    yield opened
    await opened.aclose()


# --- installations ----------------------------------------------------------------------
async def test_an_installation_survives_a_restart_on_the_same_sqlite_file_encrypted(
    tmp_path: Path,
) -> None:
    first = await sqlite_at(tmp_path / "state.db")
    await kept(first).async_save(installation())
    await first.aclose()

    stored = _bytes_under(tmp_path)
    assert b"install:T1" in stored  # the record is there, sealed
    assert TOKEN.encode() not in stored
    assert TEAM_NAME.encode() not in stored
    assert b"xoxp-" not in stored  # the installer's user token is never kept

    second = await sqlite_at(tmp_path / "state.db")
    try:
        bot = await kept(second).async_find_bot(enterprise_id=None, team_id="T1")
        assert bot is not None
        assert (TOKEN, TEAM_NAME) == (bot.bot_token, bot.team_name)
        assert ["app_mentions:read", "chat:write"] == bot.bot_scopes
    finally:
        await second.aclose()


async def test_two_replicas_on_one_redis_share_an_installation_and_its_uninstall(
    redis_server: RedisServer, inspect: redis.Redis
) -> None:
    a_store = ResilientStore(redis_store(redis_server.url, prefix="gdocs:"))
    b_store = ResilientStore(redis_store(redis_server.url, prefix="gdocs:"))
    try:
        a, b = kept(a_store), kept(b_store)
        await a.async_save(installation())
        bot = await b.async_find_bot(enterprise_id=None, team_id="T1")
        assert bot is not None
        assert TOKEN == bot.bot_token

        raw = b"".join(inspect.dump(k) or b"" for k in inspect.keys("*"))
        assert [b"gdocs:install:T1"] == inspect.keys("*")
        assert TOKEN.encode() not in raw
        assert TEAM_NAME.encode() not in raw

        await b.async_delete_all(enterprise_id=None, team_id="T1")
        assert await a.async_find_bot(enterprise_id=None, team_id="T1") is None
        assert [] == inspect.keys("*")
    finally:
        await a_store.aclose()
        await b_store.aclose()


async def test_an_org_wide_install_is_found_from_any_workspace_of_its_organisation(
    store: Store,
) -> None:
    installs_ = kept(store)
    await installs_.async_save(installation(enterprise="E1", org_wide=True, token="xoxb-org"))

    for team in ("T1", "T2"):
        bot = await installs_.async_find_bot(
            enterprise_id="E1", team_id=team, is_enterprise_install=True
        )
        assert bot is not None
        assert "xoxb-org" == bot.bot_token
        assert bot.is_enterprise_install
    found = await installs_.async_find_installation(
        enterprise_id="E1", team_id="T2", is_enterprise_install=True
    )
    assert found is not None
    assert "xoxb-org" == found.bot_token
    assert "U0INSTALLER" == found.user_id
    assert await installs_.async_find_bot(enterprise_id="E2", team_id="T1") is None
    assert (await installs_.find_by_key("E1")) is not None


async def test_a_workspace_install_in_a_grid_org_is_not_another_workspaces(store: Store) -> None:
    installs_ = kept(store)
    await installs_.async_save(installation("T1", enterprise="E1"))

    assert await installs_.async_find_bot(enterprise_id="E1", team_id="T1") is not None
    assert await installs_.async_find_bot(enterprise_id="E1", team_id="T2") is None


async def test_an_uninstall_removes_that_installation_only_and_none_is_ever_evicted(
    store: Store,
) -> None:
    """max_entries is 2 a namespace: three installs are all kept (keys.INSTALL is own-bound)."""
    installs_ = kept(store)
    await installs_.async_save(installation("T1", token="xoxb-one"))
    await installs_.async_save(installation("T2", token="xoxb-two"))
    await installs_.async_save(installation(enterprise="E1", org_wide=True, token="xoxb-org"))
    assert 3 == await installs_.count()

    await installs_.async_delete_bot(enterprise_id=None, team_id="T1")
    # an org-wide app's uninstall event carries the workspace it came through, not the flag
    await installs_.async_delete_all(enterprise_id="E1", team_id="T9")

    assert await installs_.find_by_key("T1") is None
    assert await installs_.find_by_key("E1") is None
    bot = await installs_.find_by_key("T2")
    assert bot is not None
    assert "xoxb-two" == bot.bot_token
    assert 1 == await installs_.count()


async def test_a_user_token_revoked_leaves_the_bot_installed(store: Store) -> None:
    installs_ = kept(store)
    await installs_.async_save(installation())
    await installs_.async_delete_installation(enterprise_id=None, team_id="T1", user_id="U0X")
    assert await installs_.find_by_key("T1") is not None


async def test_a_record_sealed_with_the_old_key_is_read_after_a_rotation(store: Store) -> None:
    await kept(store, OLD_KEY).async_save(installation())

    rotated = kept(store, f"{KEY},{OLD_KEY}")
    bot = await rotated.async_find_bot(enterprise_id=None, team_id="T1")
    assert bot is not None
    assert TOKEN == bot.bot_token

    # read once under "new,old": sealed again with the new key, so the old one can go
    assert await kept(store, KEY).find_by_key("T1") is not None


async def test_a_wrong_key_finds_nothing_and_logs_no_secret(
    store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    await kept(store, OLD_KEY).async_save(installation())

    wrong = kept(store, KEY)
    with caplog.at_level(logging.DEBUG):
        for _ in range(3):  # each event from that workspace: warned once
            assert await wrong.async_find_bot(enterprise_id=None, team_id="T1") is None
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert 1 == len(warnings)
    assert "SLACK_TOKEN_ENCRYPTION_KEY" in warnings[0].getMessage()
    for secret in (KEY, OLD_KEY, TOKEN, TEAM_NAME):
        assert secret not in caplog.text


async def test_with_redis_down_nothing_is_found_kept_or_logged_secretly(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A token is never kept in one replica's memory: the save fails (Bolt's failure page)."""
    store = ResilientStore(redis_store(f"redis://127.0.0.1:{_closed_port()}/0", prefix="g:"))
    try:
        installs_ = kept(store)
        with pytest.raises(BoltError):
            await installs_.async_save(installation())
        assert await installs_.async_find_bot(enterprise_id=None, team_id="T1") is None
        assert await installs_.find_by_key("T1") is None
    finally:
        await store.aclose()
    assert TOKEN not in caplog.text
    assert KEY not in caplog.text


async def test_a_new_installation_past_the_maximum_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(installs, "MAX_INSTALLATIONS", 2)
    installs_ = kept(MemoryStore(max_entries=100, unevicted=keys.UNEVICTED))
    await installs_.async_save(installation("T1"))
    await installs_.async_save(installation("T2"))

    with pytest.raises(BoltError):
        await installs_.async_save(installation("T3"))
    await installs_.async_save(installation("T2", token="xoxb-reinstalled"))  # not a new one
    bot = await installs_.find_by_key("T2")
    assert bot is not None
    assert "xoxb-reinstalled" == bot.bot_token
    assert await installs_.find_by_key("T3") is None


@pytest.mark.parametrize("value", ["", "not-a-key", f"{KEY},short"])
def test_an_unusable_encryption_key_is_one_sentence_that_never_echoes_it(value: str) -> None:
    with pytest.raises(ConfigError) as raised:
        TokenCipher.from_setting(value)
    message = str(raised.value)
    assert message.startswith("SLACK_TOKEN_ENCRYPTION_KEY")
    assert "Fernet.generate_key()" in message
    assert "not-a-key" not in message
    assert "short" not in message
    assert KEY not in message


# --- the install page's state -----------------------------------------------------------
async def test_a_state_is_accepted_once_on_any_replica(
    redis_server: RedisServer,
) -> None:
    a_store = redis_store(redis_server.url, prefix="gdocs:")
    b_store = redis_store(redis_server.url, prefix="gdocs:")
    try:
        issued = await StoreOAuthStates(a_store, STATE_SECRET).async_issue()
        b = StoreOAuthStates(b_store, STATE_SECRET)
        assert [True, False] == [await b.async_consume(issued), await b.async_consume(issued)]
    finally:
        await a_store.aclose()
        await b_store.aclose()


async def test_a_forged_state_is_refused_and_not_spent() -> None:
    states = StoreOAuthStates(MemoryStore(max_entries=100), STATE_SECRET)
    issued = await states.async_issue()
    nonce, _, signature = issued.partition(".")
    other = await StoreOAuthStates(MemoryStore(max_entries=100), "another-secret-16+").async_issue()

    for forged in (f"{nonce}.{'0' * len(signature)}", f"{nonce}.", nonce, other, "", "é.é.é"):
        assert not await states.async_consume(forged), forged
    assert await states.async_consume(issued)


async def test_opening_the_install_page_writes_nothing_to_the_store(tmp_path: Path) -> None:
    """Anyone may open /slack/install: a flood of it must not fill the store."""
    store = await sqlite_at(tmp_path / "state.db")
    try:
        states = StoreOAuthStates(store, STATE_SECRET)
        issued = [await states.async_issue() for _ in range(50)]
        assert await store.scan(keys.OAUTH_STATE.prefix, TEXT, 100) == []
        assert await states.async_consume(issued[7])
        assert len(await store.scan(keys.OAUTH_STATE.prefix, TEXT, 100)) == 1
    finally:
        await store.aclose()


async def test_a_state_past_its_expiration_is_refused(tmp_path: Path) -> None:
    clock = FakeClock()
    store = await SqliteStore.open(tmp_path / "state.db", max_entries=100, clock=clock)
    try:
        states = StoreOAuthStates(store, STATE_SECRET, expiration_seconds=600, clock=clock)
        late, in_time = await states.async_issue(), await states.async_issue()
        clock.advance(599)
        assert await states.async_consume(in_time)
        clock.advance(2)
        assert not await states.async_consume(late)
    finally:
        await store.aclose()


# --- settings ---------------------------------------------------------------------------
OAUTH = {
    "slack_client_id": "111.222",
    "slack_client_secret": "client-secret-value",
    "slack_state_secret": STATE_SECRET,
    "slack_token_encryption_key": KEY,
    "slack_signing_secret": "signing-secret-value",
}


def settings_of(values: dict[str, str | None]) -> Settings:
    return Settings(_env_file=None, **values)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({}, []),
        ({"slack_signing_secret": None, "slack_app_token": "xapp-1"}, []),
        ({"slack_client_secret": None}, ["SLACK_CLIENT_SECRET is not set"]),
        ({"slack_state_secret": None}, ["SLACK_STATE_SECRET is not set"]),
        ({"slack_state_secret": "short-secret"}, ["SLACK_STATE_SECRET must be at least 16"]),
        ({"slack_token_encryption_key": None}, ["SLACK_TOKEN_ENCRYPTION_KEY is not set"]),
        ({"slack_token_encryption_key": "oops"}, ["SLACK_TOKEN_ENCRYPTION_KEY: each key"]),
        ({"slack_signing_secret": None}, ["SLACK_SIGNING_SECRET is not set"]),
    ],
)
def test_oauth_mode_needs_its_secrets_not_a_bot_token(
    changes: dict[str, str | None], expected: list[str]
) -> None:
    settings = settings_of({**OAUTH, **changes})
    assert settings.oauth_mode
    problems = settings.slack_problems()
    assert len(expected) == len(problems), problems
    for start, problem in zip(expected, problems, strict=True):
        assert problem.startswith(start)
    for value in (*OAUTH.values(), "short-secret", "oops"):
        assert all(value not in p for p in problems)


def test_with_a_bot_token_the_oauth_settings_are_unused_and_said_so() -> None:
    settings = settings_of({**OAUTH, "slack_state_secret": "short", "slack_bot_token": "xoxb-1"})
    assert not settings.oauth_mode
    assert [] == settings.slack_problems()
    assert settings.oauth_ignored is not None
    assert "SLACK_CLIENT_ID" in settings.oauth_ignored
    one_token = settings_of({"slack_bot_token": "xoxb-1"})
    assert one_token.oauth_ignored is None


# --- gdocs-bot check --------------------------------------------------------------------
async def test_check_in_oauth_mode_counts_the_installs_instead_of_testing_a_token(
    dk_server: FakeDeveloperKnowledge, tmp_path: Path
) -> None:
    store = await sqlite_at(tmp_path / "state.db")
    await kept(store).async_save(installation("T1"))
    await kept(store).async_save(installation(enterprise="E1", org_wide=True))
    await store.aclose()
    env = {k.upper(): v for k, v in OAUTH.items()}
    env |= {"GOOGLE_API_KEY": "test-key", "DEVELOPER_KNOWLEDGE_MCP_URL": dk_server.url}

    table = gdocs(tmp_path, "check", STATE_URL="sqlite:///state.db", **env)
    as_json = gdocs(tmp_path, "check", "--json", STATE_URL="sqlite:///state.db", **env)
    broken = gdocs(tmp_path, "check", **{**env, "SLACK_TOKEN_ENCRYPTION_KEY": "oops"})
    other_key = Fernet.generate_key().decode()
    wrong = gdocs(
        tmp_path,
        "check",
        STATE_URL="sqlite:///state.db",
        **env | {"SLACK_TOKEN_ENCRYPTION_KEY": other_key},
    )

    assert 0 == table.returncode, table.stdout + table.stderr
    slack_row = next(line for line in table.stdout.splitlines() if line.startswith("slack "))
    assert " ok " in slack_row
    assert "OAuth installs (SLACK_CLIENT_ID=111.222): 2 installed" in slack_row
    (row,) = [c for c in json.loads(as_json.stdout)["checks"] if c["check"] == "slack"]
    assert "ok" == row["status"]
    assert row["detail"].startswith("OAuth installs (SLACK_CLIENT_ID=111.222): 2 installed")
    assert "SLACK_TOKEN_ENCRYPTION_KEY: each key" in broken.stdout
    wrong_row = next(line for line in wrong.stdout.splitlines() if line.startswith("slack "))
    assert " FAIL " in wrong_row
    assert "SLACK_TOKEN_ENCRYPTION_KEY: 2 of 2 installs open with none of its keys" in wrong_row
    secrets_ = [v for k, v in OAUTH.items() if k != "slack_client_id"] + [TOKEN, "oops", other_key]
    for result in (table, as_json, broken, wrong):
        assert all(s not in result.stdout + result.stderr for s in secrets_)


def _bytes_under(folder: Path) -> bytes:
    """Every byte of the SQLite file and its journal."""
    return b"".join(p.read_bytes() for p in folder.iterdir() if p.is_file())


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_with_one_token_the_bot_never_loads_cryptography() -> None:
    """OAuth mode's cipher costs about 6 MB of memory: a one-token bot must not pay it."""
    probe = (
        "import sys; from bot.serving.assembly import open_bot; import bot.slack.app; "
        "import bot.serving.runtime; print('cryptography' in sys.modules)"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert "False" == loaded.stdout.strip()
