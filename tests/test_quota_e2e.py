"""answer_query's quota end to end, its limits in time: signed `/gdocs` commands to the real
Bolt app, the real MCP client against the `mcp` SDK fake enforcing N a minute and M a Pacific
day (each 429 form), the recording fake Slack, and one injected clock for all of them (no
sleeps). What a person sees: generated answers while the quota lasts, search results with a
note that names the limit and says when answers come back, and the wait for a minute slot
that is about to free. (Fair use, question keys, `/gdocs quota`: test_quota_e2e_people.py.)"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from bot.quota import SLOT_MARGIN_SECONDS
from tests.fakes.clock import TestClock
from tests.fakes.mcp_servers import FakeDeveloperKnowledge, Fault, google_error
from tests.fakes.quota import Form, QuotaEnforcer
from tests.quota_e2e_support import (
    FORMS,
    NO_RATE_LIMIT,
    ROME,
    SERVER_MINUTE,
    T0,
    answer_calls,
    ask,
    shown_in,
)
from tests.slack_harness import ASKER, running_bot

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def clock() -> TestClock:
    return TestClock(T0)


# --- the minute ------------------------------------------------------------------------------
@pytest.mark.parametrize("form", FORMS)
async def test_three_answers_a_minute_429_then_answers_again_once_the_minute_passes(
    dk_server: FakeDeveloperKnowledge, clock: TestClock, form: Form
) -> None:
    """The issue's scenario: the server allows 3 a minute, the bot would send 10. Three
    generated answers; the fourth question is refused once and gets search results with the
    minute note; the next searches without a call; once the minute has passed, generated
    answers again (not a day-long pause)."""
    dk_server.quota = QuotaEnforcer(per_minute=3, form=form, clock=clock)
    async with running_bot(
        dk_server, clock=clock, sleep=clock.sleep, answer_quota_per_minute=10, **NO_RATE_LIMIT
    ) as bot:
        bot.fake.timezones[ASKER] = ROME
        shown = []
        for n in range(5):
            shown.append(await ask(bot, f"how do I configure feature {n}?"))
            clock.advance(5)
        assert ["answer"] * 3 + ["search"] * 2 == [s.kind for s in shown]
        assert 4 == answer_calls(dk_server)  # the fifth made no call
        # the server's limit (3: a tool error's text does not say), and when its window
        # opens again: T0 + 60 s
        limit = SERVER_MINUTE[form].format(3)
        assert shown[3].note.startswith(f"{limit} — generated answers are back in about 45 s."), (
            shown[3].note
        )
        # the next one is refused by the stored pause, which kept the server's number
        assert shown[4].note.startswith(f"{limit} — generated answers are back in about 40 s.")

        clock.set(T0 + timedelta(seconds=60 + SLOT_MARGIN_SECONDS))
        again = await ask(bot, "how do I configure feature 5?")
        assert "answer" == again.kind
        assert 1 == len(dk_server.quota.refused)
        assert [] == bot.fake.invalid_payloads


async def test_a_burst_past_the_bots_own_minute_limit_searches_for_the_rest_of_that_minute(
    dk_server: FakeDeveloperKnowledge, clock: TestClock
) -> None:
    """ANSWER_QUOTA_PER_MINUTE=3 and a burst of six: three answers, then search with the note
    for the rest of that minute, and no call the bot knew would be refused; the next minute
    answers again."""
    dk_server.quota = QuotaEnforcer(per_minute=10, clock=clock)
    async with running_bot(
        dk_server, clock=clock, sleep=clock.sleep, answer_quota_per_minute=3, **NO_RATE_LIMIT
    ) as bot:
        shown = []
        for n in range(6):
            shown.append(await ask(bot, f"how do I tune setting {n}?"))
            clock.advance(1)
        assert ["answer"] * 3 + ["search"] * 3 == [s.kind for s in shown]
        assert (3, []) == (answer_calls(dk_server), dk_server.quota.refused)
        # the oldest of the three leaves the window at T0 + 60 s: 57 s after the fourth
        assert shown[3].note.startswith(
            "3 answers a minute are in use — generated answers are back in about 60 s."
        ), shown[3].note

        clock.set(T0 + timedelta(seconds=61))
        assert "answer" == (await ask(bot, "how do I tune setting 6?")).kind


@pytest.mark.parametrize("form", FORMS)
async def test_a_shared_project_costs_at_most_one_refused_call_per_minute_window(
    dk_server: FakeDeveloperKnowledge, clock: TestClock, form: Form
) -> None:
    """Another app spends the project's quota too (server: 3 a minute, the bot's ledger: 3):
    the bot's third call is refused, and the rest of that window is searched without a call;
    the next window answers again."""
    quota = QuotaEnforcer(per_minute=3, form=form, clock=clock)
    dk_server.quota = quota
    quota.admit(who="other app")
    async with running_bot(
        dk_server, clock=clock, sleep=clock.sleep, answer_quota_per_minute=3, **NO_RATE_LIMIT
    ) as bot:
        clock.advance(1)
        shown = []
        for n in range(6):
            shown.append(await ask(bot, f"how do I scale service {n}?"))
            clock.advance(2)
        assert ["answer"] * 2 + ["search"] * 4 == [s.kind for s in shown]
        assert 3 == answer_calls(dk_server)
        assert 1 == quota.most_refused_in_one_window("minute")
        assert shown[2].note.startswith(SERVER_MINUTE[form].format(3)), shown[2].note

        clock.set(T0 + timedelta(seconds=62))
        assert "answer" == (await ask(bot, "how do I scale service 6?")).kind
        assert 1 == len(quota.refused_for("minute"))


async def test_a_question_waits_for_a_minute_slot_that_frees_soon_and_says_why(
    dk_server: FakeDeveloperKnowledge, clock: TestClock
) -> None:
    """The minute's answers are in use but a slot frees in 9 s (8 s and the ledger's margin,
    within ANSWER_QUOTA_WAIT_SECONDS): the progress note is replaced by why it takes longer,
    then the generated answer lands."""
    async with running_bot(
        dk_server, clock=clock, sleep=clock.sleep, answer_quota_per_minute=2, **NO_RATE_LIMIT
    ) as bot:
        for n in range(2):
            await ask(bot, f"how do I rotate key {n}?")
            clock.advance(1)
        clock.set(T0 + timedelta(seconds=52))
        sent = await bot.command("how do I rotate key 2?")
        await bot.finished(3)
        [post] = [c for c in bot.fake.calls_to("chat.postMessage") if "key 2" in c.args["text"]]
        assert sent.key is not None
        progress, waiting, cleanup = bot.fake.responses_to(sent.key)

        assert "Looking that up…" == progress["text"]
        assert waiting["replace_original"] is True
        assert waiting["text"] == (
            "All 2 answers of this minute are in use; a slot frees in about 9 s, "
            "so your answer takes a little longer…"
        )
        assert cleanup.get("delete_original") is True
        assert "answer" == shown_in(post.args).kind
        assert [8.0 + SLOT_MARGIN_SECONDS] == clock.slept
        assert 3 == answer_calls(dk_server)
        assert [] == bot.fake.invalid_payloads


# --- the day ---------------------------------------------------------------------------------
MIDNIGHT_PT = datetime(2026, 12, 2, 8, 0, tzinfo=UTC)
DAYS = [
    pytest.param("http", T0, MIDNIGHT_PT, id="http"),
    pytest.param("jsonrpc", T0, MIDNIGHT_PT, id="jsonrpc"),
    pytest.param("result", T0, MIDNIGHT_PT, id="result"),
    # 01:30 PDT on the day clocks fall back: midnight is 08:00 UTC, not 07:00
    pytest.param(
        "http",
        datetime(2026, 11, 1, 8, 30, tzinfo=UTC),
        datetime(2026, 11, 2, 8, 0, tzinfo=UTC),
        id="fall-back-day",
    ),
    # 01:30 PST on the day clocks spring forward: midnight is 07:00 UTC, not 08:00
    pytest.param(
        "http",
        datetime(2026, 3, 8, 9, 30, tzinfo=UTC),
        datetime(2026, 3, 9, 7, 0, tzinfo=UTC),
        id="spring-forward-day",
    ),
]


@pytest.mark.parametrize(("form", "start", "reset"), DAYS)
async def test_the_day_spent_means_no_answer_query_call_until_midnight_pacific(
    dk_server: FakeDeveloperKnowledge, form: Form, start: datetime, reset: datetime
) -> None:
    """The server's day (2 answers) is spent: from the refused call until the next midnight in
    Los Angeles (after UTC midnight too, and on daylight-saving days) every question is
    searched without a call; a second after that midnight, generated answers are back."""
    clock = TestClock(start)
    quota = QuotaEnforcer(per_day=2, form=form, clock=clock)
    dk_server.quota = quota
    async with running_bot(dk_server, clock=clock, sleep=clock.sleep, **NO_RATE_LIMIT) as bot:
        shown = [await ask(bot, f"how do I set up project {n}?") for n in range(3)]
        assert ["answer", "answer", "search"] == [s.kind for s in shown]
        assert "generated answers are used up" in shown[2].note
        [refusal] = quota.refused_for("day")
        assert reset == refusal.until  # the fake's day ends there too
        assert 3 == answer_calls(dk_server)

        utc_midnight = datetime.combine(start.date() + timedelta(days=1), datetime.min.time(), UTC)
        later = [utc_midnight + timedelta(seconds=1), reset - timedelta(hours=1)]
        for n, when in enumerate([*later, reset - timedelta(seconds=1)]):
            clock.set(max(when, start + timedelta(minutes=1)))
            assert "search" == (await ask(bot, f"how do I set up region {n}?")).kind
        assert 3 == answer_calls(dk_server)

        clock.set(reset + timedelta(seconds=1))
        assert "answer" == (await ask(bot, "how do I set up billing?")).kind
        assert 1 == len(quota.refused)


# --- an unclear 429 ---------------------------------------------------------------------------
def _ambiguous(form: Form) -> Fault:
    """One answer_query call answered by a 429 that does not say which limit, in `form`."""
    text = "429 RESOURCE_EXHAUSTED: Resource has been exhausted (e.g. check quota)."
    if form == "http":
        fault = google_error(429, "RESOURCE_EXHAUSTED", text)
        fault.tool = "answer_query"
        return fault
    if form == "jsonrpc":
        error = json.dumps({"code": -32000, "message": text})
        body = b'{"jsonrpc": "2.0", "id": $ID, "error": ' + error.encode() + b"}"
        return Fault(status=200, chunks=[body], tool="answer_query")
    result = {"content": [{"type": "text", "text": text}], "isError": True}
    return Fault(status=200, rpc_result=result, tool="answer_query")


@pytest.mark.parametrize("form", FORMS)
async def test_an_ambiguous_429_pauses_answers_for_a_moment_only(
    dk_server: FakeDeveloperKnowledge, clock: TestClock, form: Form
) -> None:
    """A 429 that names no limit: search with "paused for a moment", no call for about a
    minute, then generated answers again (never a day-long pause)."""
    dk_server.faults.append(_ambiguous(form))
    async with running_bot(dk_server, clock=clock, sleep=clock.sleep, **NO_RATE_LIMIT) as bot:
        first = await ask(bot, "how do I label resource 1?")
        assert "search" == first.kind
        assert first.note.startswith(
            "Generated answers are paused for a moment — back in about 60 s."
        ), first.note
        clock.advance(30)
        assert "search" == (await ask(bot, "how do I label resource 2?")).kind
        assert 1 == answer_calls(dk_server)

        clock.advance(31)
        assert "answer" == (await ask(bot, "how do I label resource 3?")).kind
        assert 2 == answer_calls(dk_server)
