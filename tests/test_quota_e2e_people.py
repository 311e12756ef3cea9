"""answer_query's quota end to end, for the people asking: the per-person cap, questions that
differ only in form sharing one answer, notes in the asker's time zone, `/gdocs quota` and
/metrics. The real Bolt app over signed HTTP, the `mcp` SDK fake, the recording fake Slack
and an injected clock, as in test_quota_e2e.py."""

from __future__ import annotations

import json

import pytest

from tests.fakes.clock import TestClock
from tests.fakes.mcp_servers import FakeDeveloperKnowledge
from tests.fakes.quota import QuotaEnforcer
from tests.quota_e2e_support import (
    NO_RATE_LIMIT,
    OTHER,
    ROME,
    T0,
    answer_calls,
    ask,
)
from tests.slack_harness import ASKER, running_bot

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def clock() -> TestClock:
    return TestClock(T0)


async def test_the_day_note_says_when_answers_come_back_in_the_askers_time(
    dk_server: FakeDeveloperKnowledge, clock: TestClock
) -> None:
    """Midnight Pacific is 09:00 in Rome: an asker there reads "tomorrow at 09:00 (your
    time)"; one whose Slack profile has no zone reads Pacific time."""
    dk_server.quota = QuotaEnforcer(per_day=1, clock=clock)
    async with running_bot(dk_server, clock=clock, sleep=clock.sleep, **NO_RATE_LIMIT) as bot:
        bot.fake.timezones[ASKER] = ROME
        bot.fake.timezones[OTHER] = None
        await ask(bot, "how do I deploy app 1?")
        in_rome = await ask(bot, "how do I deploy app 2?")
        no_zone = await ask(bot, "how do I deploy app 3?", user=OTHER)

        assert in_rome.note.startswith(
            "Today's 1 generated answer is used up; they come back tomorrow at 09:00 (your time)."
        ), in_rome.note
        assert "they come back at midnight PT." in no_zone.note, no_zone.note


# --- fair use and spending answers on new questions only ---------------------------------------
async def test_one_person_past_their_daily_cap_gets_search_and_others_keep_answers(
    dk_server: FakeDeveloperKnowledge, clock: TestClock
) -> None:
    """ANSWER_QUOTA_PER_USER_PER_DAY=2: the asker's third question is searched with the
    per-person note (in their time); someone else still gets a generated answer."""
    async with running_bot(
        dk_server,
        clock=clock,
        sleep=clock.sleep,
        answer_quota_per_user_per_day=2,
        **NO_RATE_LIMIT,
    ) as bot:
        bot.fake.timezones[ASKER] = ROME
        mine = [await ask(bot, f"how do I index table {n}?") for n in range(3)]
        theirs = await ask(bot, "how do I index table 9?", user=OTHER)

        assert ["answer", "answer", "search"] == [s.kind for s in mine]
        assert mine[2].note.startswith(
            "You've used your 2 generated answers for today; they come back tomorrow at 09:00"
            " (your time)."
        ), mine[2].note
        assert "answer" == theirs.kind
        assert 3 == answer_calls(dk_server)


async def test_questions_differing_only_in_form_cost_one_call(
    dk_server: FakeDeveloperKnowledge, clock: TestClock
) -> None:
    """ "How do I create a Cloud Storage bucket?" then "how to create cloud storage buckets":
    one answer_query call, and each asker sees their own wording."""
    async with running_bot(dk_server, clock=clock, **NO_RATE_LIMIT) as bot:
        first = await ask(bot, "How do I create a Cloud Storage bucket?")
        second = await ask(bot, "how to create cloud storage buckets", user=OTHER)

        assert ("answer", "answer") == (first.kind, second.kind)
        assert 1 == answer_calls(dk_server)
        assert "how to create cloud storage buckets" in second.text


async def test_questions_differing_in_their_verb_cost_a_call_each(
    dk_server: FakeDeveloperKnowledge, clock: TestClock
) -> None:
    """ "create a bucket" and "delete a bucket" never share an answer."""
    async with running_bot(dk_server, clock=clock, **NO_RATE_LIMIT) as bot:
        created = await ask(bot, "ask create a bucket")
        deleted = await ask(bot, "ask delete a bucket")

        assert ("answer", "answer") == (created.kind, deleted.kind)
        assert ["create a bucket", "delete a bucket"] == [
            c.arguments["query"] for c in dk_server.tool_calls("answer_query")
        ]


# --- /gdocs quota and /metrics ---------------------------------------------------------------
async def test_gdocs_quota_shows_the_team_the_minute_the_asker_and_the_reset_privately(
    dk_server: FakeDeveloperKnowledge, clock: TestClock
) -> None:
    """`/gdocs quota` after three answers (two of them the asker's): one ephemeral reply on
    the acknowledgement, no upstream call, and answers left today, this minute, the asker's
    own, and the reset in the asker's time."""
    async with running_bot(dk_server, clock=clock, **NO_RATE_LIMIT) as bot:
        bot.fake.timezones[ASKER] = ROME
        await ask(bot, "how do I export logs 1?")
        await ask(bot, "how do I export logs 2?")
        await ask(bot, "how do I export logs 3?", user=OTHER)
        calls, posts = len(dk_server.calls), len(bot.fake.calls_to("chat.postMessage"))

        sent = await bot.command("quota")
        await bot.finished(4)
        assert sent.key is not None
        [status] = bot.fake.responses_to(sent.key)
        shown = json.dumps(status, ensure_ascii=False)

        assert json.loads(sent.body) == status  # it rode on the acknowledgement
        assert "ephemeral" == status["response_type"]
        assert (calls, posts) == (len(dk_server.calls), len(bot.fake.calls_to("chat.postMessage")))
        assert "*47* of 50 left for the team" in shown
        assert "*7* of 10 free" in shown
        assert "Yours today: *8* of 10 left" in shown
        assert "resets tomorrow at 09:00 (your time), midnight Pacific time" in shown
        assert [] == bot.fake.invalid_payloads


async def test_metrics_show_answers_left_and_the_servers_refusals_by_limit(
    dk_server: FakeDeveloperKnowledge, clock: TestClock
) -> None:
    """After two answers and a per-minute 429: /metrics has answers left today and this
    minute, and one refusal labelled minute; after a per-day 429, one labelled day."""
    quota = QuotaEnforcer(per_minute=2, per_day=3, clock=clock)
    dk_server.quota = quota
    async with running_bot(dk_server, clock=clock, sleep=clock.sleep, **NO_RATE_LIMIT) as bot:
        for n in range(3):
            await ask(bot, f"how do I tag image {n}?")
        text = bot.metrics.render()
        assert "gdocs_answers_left_today 48" in text
        assert "gdocs_answers_left_this_minute 0" in text  # paused by the server's 429
        assert 'gdocs_quota_refusals_total{limit="minute"} 1' in text

        clock.advance(120)
        for n in range(3, 5):
            await ask(bot, f"how do I tag image {n}?")
        text = bot.metrics.render()
        assert 'gdocs_quota_refusals_total{limit="day"} 1' in text
        assert "gdocs_answers_left_today 0" in text
