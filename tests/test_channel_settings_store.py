"""Channel settings live in the state store: they survive a restart on a real SQLite file,
two replicas on one real redis-server share them, and a store that fails reads as the
defaults (answers go on) while a change says it could not be saved."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

from bot.channels import ChannelSettings
from bot.slack.memory import ChannelSettingsStore
from bot.store import JSON, MemoryStore, SqliteStore, StoreError
from tests.fakes.mcp_servers import FakeDeveloperKnowledge
from tests.fakes.redis_server import RedisServer
from tests.fakes.slack_api import FakeSlack
from tests.slack_harness import running_bot

QUESTION = "how do I create a Cloud Storage bucket?"


async def test_settings_survive_a_restart_on_sqlite(
    dk_server: FakeDeveloperKnowledge, tmp_path: Path
) -> None:
    """`/gdocs channel auto` and `private on` on one bot; a new bot on the same SQLite file
    answers a top-level question there, privately, without being told again."""
    state_url = f"sqlite:///{tmp_path / 'state.db'}"
    fake = FakeSlack().start()
    try:
        async with running_bot(dk_server, fake=fake, state_url=state_url) as first:
            await first.command("channel auto")
            await first.command("channel private on")
            await first.finished(2)
        fake.calls.clear()
        async with running_bot(dk_server, fake=fake, state_url=state_url) as second:
            assert ChannelSettings("auto", private=True) == await second.deps.channels.get("C1")
            await second.channel_message(QUESTION)
            assert ("auto", "ok") == (await second.finished(1))[-1]
            [private] = fake.calls_to("chat.postEphemeral")
            assert [] == fake.calls_to("chat.postMessage")
            assert "Share" in json.dumps(private.args["blocks"])
    finally:
        fake.stop()


async def test_two_replicas_on_redis_share_the_settings(
    dk_server: FakeDeveloperKnowledge, redis_server: RedisServer
) -> None:
    """Replica A switches C1 to an answer channel; replica B, on the same Redis, answers the
    next question asked there."""
    fake = FakeSlack().start()
    try:
        async with (
            running_bot(dk_server, fake=fake, state_url=redis_server.url) as a,
            running_bot(dk_server, fake=fake, state_url=redis_server.url) as b,
        ):
            await a.command("channel auto")
            await a.finished(1)
            await b.channel_message(QUESTION)
            assert ("auto", "ok") == (await b.finished(1))[-1]
            assert [] == b.metrics.finished[:-1]
            answer = fake.calls_to("chat.postMessage")[-1]
            assert answer.args["thread_ts"] is not None
            assert 1 == len(dk_server.tool_calls("answer_query"))
    finally:
        fake.stop()


class _FailingStore(MemoryStore):
    async def get(self, key: str, codec: object) -> object:  # type: ignore[override]
        raise StoreError("down")

    async def batch(self, ops: object) -> list[object]:  # type: ignore[override]
        raise StoreError("down")  # every write, `set` too


async def test_a_failing_store_reads_as_the_defaults_and_refuses_changes() -> None:
    """Reads degrade to the defaults (and ANSWER_CHANNELS still applies); a save raises, for
    the command to say so."""
    channels = ChannelSettingsStore(_FailingStore(), answer_channels=frozenset({"C9"}))
    assert ChannelSettings() == await channels.get("C1")
    assert "auto" == (await channels.get("C9")).mode
    try:
        await channels.save("C1", ChannelSettings("auto"))
    except StoreError:
        pass
    else:
        raise AssertionError("a save into a failing store must raise")


async def test_another_replicas_change_is_seen_at_once() -> None:
    """Two processes on one store: B reads A's change at once. Back to every default deletes
    the key."""
    store = MemoryStore(max_entries=100)
    a, b = ChannelSettingsStore(store), ChannelSettingsStore(store)
    assert "mentions" == (await b.get("C1")).mode
    await a.save("C1", ChannelSettings("auto"))
    assert "auto" == (await b.get("C1")).mode
    await a.save("C1", ChannelSettings())
    assert [] == await store.scan("channel:", JSON, 10)


async def test_the_home_list_is_only_channels_with_settings() -> None:
    """of_many: stored settings and ANSWER_CHANNELS, nothing for the rest."""
    store = MemoryStore(max_entries=100)
    channels = ChannelSettingsStore(store, answer_channels=frozenset({"C9"}))
    await channels.save("C2", ChannelSettings(private=True))
    found = await channels.of_many(["C1", "C2", "C9", "C2"])
    assert {"C2": ChannelSettings(private=True), "C9": ChannelSettings("auto")} == found


async def test_settings_stored_before_products_existed_read_as_all_products(
    tmp_path: Path,
) -> None:
    """A value written by the version before products (no `products` field) is read, not
    dropped as another version's: its mode and privacy still apply (real SQLite bytes)."""
    async with contextlib.aclosing(await SqliteStore.open(tmp_path / "state.db")) as store:
        old = {"mode": "auto", "private": True, "followups": "anyone"}
        await store.set("channel:C1", old, JSON, 60)
        found = await ChannelSettingsStore(store).get("C1")
    assert ChannelSettings("auto", True, "anyone") == found
    assert () == found.products


async def test_a_channels_products_are_stored_with_its_other_settings() -> None:
    store = MemoryStore(max_entries=100)
    channels = ChannelSettingsStore(store)
    scoped = ChannelSettings("auto", products=("firebase.google.com",))
    await channels.save("C1", scoped)
    assert scoped == await ChannelSettingsStore(store).get("C1")
    await channels.save("C1", ChannelSettings())  # `products all` back to every default
    assert [] == await store.scan("channel:", JSON, 10)
