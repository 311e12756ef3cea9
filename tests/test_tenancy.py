"""Issue 43: one deployment serving several workspaces (OAuth mode) keeps what each saved or
asked apart. A team answer or draft belongs to the installation it was saved under: another
neither finds, lists, counts nor opens it; channel settings remember their installation; an
uninstall forgets both; the week report, which counts every workspace, stays out of Slack.
With one token (installation "") keys, records and exports are as they always were.
Store tests on a real SQLite file; Slack-side ones over signed requests to a bot installed
in T1 and T2 through Bolt's OAuth flow (the harness's own requests are T1's)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest

from bot import keys, tenant
from bot.channels import ChannelSettings
from bot.errors import InvalidInput
from bot.feedback import AnswerRecord
from bot.slack.forget import forget_installation
from bot.slack.listeners.drafts import draft_of
from bot.slack.memory import ChannelSettingsStore, Fetch, UserProfile, UserProfiles
from bot.store import TEXT, SqliteStore, Store
from bot.team import TeamAnswer, TeamAnswers
from bot.upstream import question_key
from tests.fakes.mcp_servers import FakeDeveloperKnowledge
from tests.fakes.slack_api import FakeSlack
from tests.fakes.slack_event_payloads import app_home_opened_event
from tests.fakes.slack_payloads import slash_command_form
from tests.slack_harness import ASKER, SlackBot, running_bot
from tests.team_support import SAVED_AT, team_answer
from tests.test_cli import gdocs
from tests.test_oauth_e2e import event_body, install, mention, oauth_bot, uninstall
from tests.test_slack_commands import blocks_text, tools_called
from tests.test_slack_team_drafts import ADMIN, home_of
from tests.test_slack_team_save import form_values, submit, use_shortcut

pytestmark = pytest.mark.timeout(60)

QUESTION = "how do I create a bucket?"
TEAM_TEXT = "We use Terraform for buckets, not the console."


@pytest.fixture
async def sqlite(tmp_path: Path) -> AsyncIterator[Store]:
    store = await SqliteStore.open(tmp_path / "state.db", max_entries=5000)
    yield store
    await store.aclose()


def team_on(store: Store) -> TeamAnswers:
    return TeamAnswers(store, 180, lambda: SAVED_AT)


def digest(text: str) -> str:
    return hashlib.sha256(question_key(text).encode()).hexdigest()


# --- the store ------------------------------------------------------------------------------
async def test_a_team_answer_saved_in_one_workspace_is_found_and_listed_only_there(
    sqlite: Store,
) -> None:
    """T1's workspace-wide and channel answers: T1 finds and lists them; T2 (in any channel,
    the same one too) and a one-token reader ("") find, list, open and remove none."""
    team = team_on(sqlite)
    everywhere = team_answer(QUESTION, TEAM_TEXT, workspace="T1")
    in_c2 = team_answer("where are the logs?", "In Grafana.", visibility="channel", workspace="T1")
    with tenant.running_for("T1"):
        await team.save(everywhere)
        await team.save(in_c2)
        assert everywhere == await team.find(QUESTION, "C1")
        assert in_c2 == await team.find("where are the logs?", "C2")
        assert 2 == len(await team.visible("C2"))
    for other in ("T2", ""):
        with tenant.running_for(other):
            assert None is await team.find(QUESTION, "C1")
            assert None is await team.find(QUESTION, None)
            assert None is await team.find("where are the logs?", "C2")
            assert [] == await team.visible("C2")
            assert [] == await team.all()
            assert None is await team.get(everywhere.id)
            assert False is await team.remove(everywhere.id)
            assert None is await team.approve(everywhere.id)
    with tenant.running_for("T1"):
        assert everywhere == await team.get(everywhere.id)


async def test_index_entries_are_per_installation_and_as_before_with_one_token(
    sqlite: Store,
) -> None:
    """One token: `team_q:*:<hash>` and `team_q:C2:<hash>`, no `workspace` in the stored
    record; T1: `team_q:*T1:<hash>` and `team_q:C2@T1:<hash>`, so T2 saving the same
    question is no clash and does not take T1's entries."""
    team, d = team_on(sqlite), digest(QUESTION)
    before = team_answer(QUESTION, TEAM_TEXT)
    await team.save(before)
    assert before.id == await sqlite.get(keys.TEAM_INDEX.key("*", d), TEXT)
    raw = await sqlite.get(keys.TEAM.key(before.id), TEXT)
    assert raw is not None
    assert "workspace" not in json.loads(raw)

    saved = {}
    for ws in ("T1", "T2"):
        with tenant.running_for(ws):
            saved[ws] = await team.save(team_answer(QUESTION, TEAM_TEXT, workspace=ws))
            await team.save(team_answer(QUESTION, TEAM_TEXT, visibility="channel", workspace=ws))
    for ws, answer in saved.items():
        assert answer.id == await sqlite.get(keys.TEAM_INDEX.key(f"*{ws}", d), TEXT)
        assert await sqlite.get(keys.TEAM_INDEX.key(f"C2@{ws}", d), TEXT)
        with tenant.running_for(ws):
            assert answer == await team.find(QUESTION, None)
    assert before.id == await sqlite.get(keys.TEAM_INDEX.key("*", d), TEXT)  # untouched


async def test_the_bound_on_team_answers_counts_each_installation_apart(
    sqlite: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With room for 2: T1's third is refused, T2 still saves its first."""
    monkeypatch.setattr("bot.team.MAX_TEAM_ANSWERS", 2)
    team = team_on(sqlite)
    with tenant.running_for("T1"):
        await team.save(team_answer("first question", "a", workspace="T1"))
        await team.save(team_answer("second question", "b", workspace="T1"))
        with pytest.raises(InvalidInput):
            await team.save(team_answer("third question", "c", workspace="T1"))
    with tenant.running_for("T2"):
        await team.save(team_answer("first question", "a", workspace="T2"))


def test_a_draft_from_a_thumbs_down_belongs_to_its_installation() -> None:
    record = AnswerRecord.model_validate(
        {"answer_id": "a1", "question": QUESTION, "kind": "answer", "posted_at": SAVED_AT}
    )
    with tenant.running_for("T1"):
        assert "T1" == draft_of(record, "U1", "x", datetime.now(UTC), 30).workspace
    assert "" == draft_of(record, "U1", "x", datetime.now(UTC), 30).workspace


async def test_channel_settings_remember_their_installation_and_are_kept_as_before_with_one_token(
    sqlite: Store,
) -> None:
    channels = ChannelSettingsStore(sqlite)
    await channels.save("C1", ChannelSettings(mode="auto"))
    assert '{"mode":"auto","private":false,"followups":null,"products":[]}' == await sqlite.get(
        keys.CHANNEL.key("C1"), TEXT
    )
    with tenant.running_for("T1"):
        await channels.save("C2", ChannelSettings(mode="auto"))
        await channels.save("C3", ChannelSettings())  # back to the defaults: deleted
    assert ChannelSettings(mode="auto", workspace="T1") == await channels.stored("C2")
    assert None is await sqlite.get(keys.CHANNEL.key("C3"), TEXT)
    assert ChannelSettings(workspace="T1").is_default


# --- forgetting an installation ---------------------------------------------------------------
async def test_forget_installation_deletes_its_channel_settings_and_team_answers_only(
    dk_server: FakeDeveloperKnowledge, caplog: pytest.LogCaptureFixture
) -> None:
    """T1's channel settings, team answers, drafts, index entries and use counts go; T2's and
    the one-token ones stay; the log line has counts and the key, no text; "" is refused."""
    async with running_bot(dk_server) as bot:
        deps, store, team = bot.deps, bot.deps.store, bot.deps.team
        ids: dict[str, list[str]] = {}
        for ws in ("T1", "T2", ""):
            with tenant.running_for(ws):
                await deps.channels.save(f"C{ws}", ChannelSettings(mode="auto"))
                answer = await team.save(team_answer(QUESTION, TEAM_TEXT, workspace=ws))
                draft = team_answer("secret draft", "d", status="draft", workspace=ws)
                await team.save(draft)
                await team.count_use(answer.id)
                ids[ws] = [answer.id, draft.id]
        with caplog.at_level(logging.INFO, logger="bot.slack.forget"):
            await forget_installation(deps, "T1")
        with pytest.raises(ValueError, match="installation key"):
            await forget_installation(deps, "")

        d = digest(QUESTION)
        for ws, gone in (("T1", True), ("T2", False), ("", False)):
            found = [
                await store.get(k, TEXT)
                for k in (
                    keys.CHANNEL.key(f"C{ws}"),
                    *(keys.TEAM.key(i) for i in ids[ws]),
                    keys.TEAM_USED.key(ids[ws][0]),
                    keys.TEAM_INDEX.key(f"*{ws}", d),
                )
            ]
            assert ([None] * 5 == found) is gone, ws
            assert (None not in found) is not gone, ws
    [line] = [r.getMessage() for r in caplog.records if r.name == "bot.slack.forget"]
    assert "installation T1 forgotten: 1 channel settings, 1 team answers, 1 drafts" == line


# --- Slack, installed in T1 and T2 ---------------------------------------------------------------
async def command_in(bot: SlackBot, team: str, text: str, channel: str) -> dict[str, Any]:
    """`/gdocs <text>` by ASKER in `team`'s `channel`: the private reply."""
    key = f"cmd-{team}-{bot.next_id()}"
    form = slash_command_form(
        text, response_url=bot.fake.response_url(key), user=ASKER, channel=channel, team_id=team
    )
    sent = await bot.post_signed(urlencode(form), content_type="application/x-www-form-urlencoded")
    assert 200 == sent.status
    bot.fake.acknowledged(key, sent.body)
    [shown] = await bot.fake.await_responses(key)
    return shown


async def home_in_t2(bot: SlackBot, user: str) -> str:
    before, done = len(bot.fake.calls_to("views.publish")), len(bot.metrics.finished)
    event = app_home_opened_event(user=user, channel="D2", tab="home")
    sent = await bot.post_signed(event_body("T2", event), content_type="application/json")
    assert 200 == sent.status
    await bot.finished(done + 1)
    [call] = [c for c in bot.fake.calls_to("views.publish")[before:] if c.args["user_id"] == user]
    return json.dumps(call.args["view"])


async def test_a_team_answer_saved_in_one_workspace_answers_there_and_not_in_the_other(
    dk_server: FakeDeveloperKnowledge, slack: FakeSlack
) -> None:
    """Saved with the shortcut's form in T1 for the whole workspace: a mention in T1 gets it
    with no answer_query call; the same question in T2 is answered by Google's docs, and
    `/gdocs team` in T2 lists nothing of T1's while T1's lists it; uninstalled, T1's is gone."""
    async with oauth_bot(dk_server, slack) as bot:
        await install(bot, "T1")
        await install(bot, "T2")
        view = await use_shortcut(bot)  # the harness's requests are T1's
        sent = await submit(bot, view, form_values(QUESTION, TEAM_TEXT, where="workspace"), ASKER)
        assert 200 == sent.status
        with tenant.running_for("T1"):
            [saved] = await bot.deps.team.all()
        assert "T1" == saved.workspace

        done = len(bot.metrics.finished)
        assert 200 == await mention(bot, "T1", QUESTION)
        await bot.finished(done + 1)
        assert [] == tools_called(dk_server)
        assert 200 == await mention(bot, "T2", QUESTION)
        await bot.finished(done + 2)
        assert ["answer_query"] == tools_called(dk_server)
        [in_t1, in_t2] = [c.args for c in bot.fake.calls_to("chat.postMessage")]
        assert "Terraform" in blocks_text(in_t1)
        assert "Terraform" not in blocks_text(in_t2)

        assert QUESTION not in blocks_text(await command_in(bot, "T2", "team", "C2"))
        assert QUESTION in blocks_text(await command_in(bot, "T1", "team", "C1"))

        await uninstall(bot, "T1")  # Slack's app_uninstalled: T1's answer goes with it
        with tenant.running_for("T1"):
            assert [] == await bot.deps.team.all()


async def test_a_draft_from_one_workspace_is_not_on_another_workspaces_admins_home(
    dk_server: FakeDeveloperKnowledge, slack: FakeSlack
) -> None:
    """T1's 👎 draft shows on T1's admin's Home, not on T2's; neither Home has the week's
    report, and `/gdocs report` says where the report is read instead."""
    async with oauth_bot(dk_server, slack) as bot:
        await install(bot, "T1")
        await install(bot, "T2")
        bot.fake.admins.add(ADMIN)
        with tenant.running_for("T1"):
            draft = team_answer("secret draft question", "d", status="draft", channel="C1")
            await bot.deps.team.save(draft.model_copy(update={"workspace": tenant.current()}))
        in_t1 = json.dumps(await home_of(bot, ADMIN))
        in_t2 = await home_in_t2(bot, ADMIN)
        report = blocks_text(await command_in(bot, "T2", "report", "C2"))

    assert "secret draft question" in in_t1
    assert "secret draft question" not in in_t2
    assert "This week" not in in_t1
    assert "This week" not in in_t2
    assert "covers every workspace this bot serves" in report
    assert "Top gaps" not in report


# --- the CLI (runs as "") ------------------------------------------------------------------
def test_team_export_writes_every_installations_answers_and_import_keeps_their_installation(
    tmp_path: Path,
) -> None:
    """Exported: the one-token answer's line as before (no `workspace`), T1's naming T1;
    imported into a fresh deployment, T1's is found in T1 only."""
    mine = team_answer("how do we deploy?", "With Terraform.")
    theirs = team_answer(QUESTION, TEAM_TEXT, workspace="T1")

    async def seed() -> None:
        store = await SqliteStore.open(tmp_path / "old.db", max_entries=5000)
        try:
            for one in (mine, theirs):
                await team_on(store).save(one)
        finally:
            await store.aclose()

    asyncio.run(seed())
    exported = gdocs(
        tmp_path, "team", "export", "--out", "team.jsonl", STATE_URL="sqlite:///old.db"
    )
    assert 0 == exported.returncode, exported.stderr
    lines = {
        json.loads(x)["id"]: json.loads(x)
        for x in (tmp_path / "team.jsonl").read_text().splitlines()
    }
    assert mine.model_dump(mode="json") == lines[mine.id]
    assert "workspace" not in lines[mine.id]
    assert "T1" == lines[theirs.id]["workspace"]

    imported = gdocs(tmp_path, "team", "import", "team.jsonl", STATE_URL="sqlite:///new.db")
    assert (0, "Imported 2 team answers\n") == (imported.returncode, imported.stdout)

    async def found(ws: str) -> TeamAnswer | None:
        store = await SqliteStore.open(tmp_path / "new.db", max_entries=5000)
        try:
            with tenant.running_for(ws):
                return await team_on(store).find(QUESTION, None)
        finally:
            await store.aclose()

    assert theirs == asyncio.run(found("T1"))
    assert None is asyncio.run(found(""))


async def test_home_opened_in_a_second_workspace_within_the_minute_is_published_there_too(
    dk_server: FakeDeveloperKnowledge, slack: FakeSlack
) -> None:
    """One person of a Grid organisation (one user id) in two of its workspaces, each with
    its own install: Home opened in T1, then in T2 a moment later with nothing different,
    is published in T2 too (T1's publishing is no reason to skip T2's tab)."""
    async with oauth_bot(dk_server, slack) as bot:
        tokens = [await install(bot, "T1"), await install(bot, "T2")]
        await home_of(bot, ASKER)
        await home_in_t2(bot, ASKER)
        published = [(c.args["user_id"], c.token) for c in bot.fake.calls_to("views.publish")]
        assert [(ASKER, tokens[0]), (ASKER, tokens[1])] == published


async def test_an_admin_of_one_workspace_is_not_taken_for_an_admin_of_another(
    sqlite: Store,
) -> None:
    """A Grid user id is the same in every workspace of the organisation, but users.info's
    `is_admin` is the calling install's workspace's: T1's answer is not reused in T2 (where
    it would let them approve drafts and change anyone's team answers). One token: kept
    under `profile:<user>` as before."""
    profiles = UserProfiles(sqlite)

    def says(admin: bool) -> Fetch:
        async def fetch(user: str) -> UserProfile:
            return UserProfile(locale="en-US", is_admin=admin)

        return fetch

    with tenant.running_for("T1"):
        assert True is (await profiles.get("W1", says(True)) or UserProfile()).is_admin
    with tenant.running_for("T2"):
        assert False is (await profiles.get("W1", says(False)) or UserProfile()).is_admin
        assert False is (await profiles.get("W1", says(True)) or UserProfile()).is_admin
    await profiles.get("W1", says(True))
    assert await sqlite.get(keys.PROFILE.key("W1"), TEXT) is not None


async def test_with_one_token_a_saved_team_answer_is_stored_as_before(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """One token (the default): a request runs for installation "", so the shortcut's form
    saves a record without `workspace` under `team_q:*:<hash>`, as before issue 43."""
    async with running_bot(dk_server) as bot:
        view = await use_shortcut(bot)
        sent = await submit(bot, view, form_values(QUESTION, TEAM_TEXT, where="workspace"), ASKER)
        assert 200 == sent.status
        [saved] = await bot.deps.team.all()
        entry = await bot.deps.store.get(keys.TEAM_INDEX.key("*", digest(QUESTION)), TEXT)
    assert "workspace" not in saved.model_dump(mode="json")
    assert saved.id == entry
