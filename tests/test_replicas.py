"""Two `gdocs-bot serve` processes on one real redis-server behave as one bot, driven over
signed HTTP: Slack's retries, cached answers, questions in flight, the answer_query ledger
and its pauses are shared; a Redis outage degrades (both keep answering) and ends by itself.
(Start-up with Redis down or a wrong password: test_state_redis_startup_e2e.py.)

The pair is started once for the module; each test starts from an empty Redis and fresh
fakes, and asks its own questions."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
import redis

from tests.fakes.mcp_servers import FakeDeveloperKnowledge
from tests.fakes.redis_server import RedisServer
from tests.fakes.slack_api import FakeSlack
from tests.process_harness import ServedBot, env_for, has_metric, metric_value

pytestmark = pytest.mark.timeout(120)

BUCKETS = "documents/docs.cloud.google.com/storage/docs/creating-buckets"
#: Slack's deadline for an acknowledgement
ACK_BUDGET_SECONDS = 3.0


@pytest.fixture(scope="module")
def dk() -> Iterator[FakeDeveloperKnowledge]:
    server = FakeDeveloperKnowledge()
    server.api_key = "test-key"
    server.add_document(BUCKETS, "Create buckets", "# Create buckets\n\nUse `gcloud`.")
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def slack() -> Iterator[FakeSlack]:
    fake = FakeSlack().start()
    yield fake
    fake.stop()


@pytest.fixture(scope="module")
def pair(
    _redis_server_for_session: RedisServer,
    dk: FakeDeveloperKnowledge,
    slack: FakeSlack,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[ServedBot, ServedBot]]:
    """Replicas A and B: same settings, same Redis, separate processes and directories."""
    # one replica's 429 is followed by the other before its next call, not within a second:
    # these tests send B's question right after A's
    env = env_for(
        slack, dk, STATE_URL=_redis_server_for_session.url, ANSWER_QUOTA_PAUSE_CHECK_SECONDS="0"
    )
    bots: list[ServedBot] = []
    try:
        for name in ("a", "b"):
            bots.append(ServedBot.start(env, tmp_path_factory.mktemp(f"replica-{name}")))
        yield bots[0], bots[1]
    finally:
        for bot in bots:
            bot.kill()


@pytest.fixture(autouse=True)
def fresh(
    redis_server: RedisServer, dk: FakeDeveloperKnowledge, slack: FakeSlack
) -> Iterator[None]:
    """An empty Redis (the fixture flushes it) and fakes that remember nothing."""
    dk.calls.clear()
    dk.faults.clear()
    dk.quota_exhausted, dk.latency = None, 0.0
    slack.calls.clear()
    slack.responses.clear()
    slack.invalid_payloads.clear()
    yield
    dk.quota_exhausted, dk.latency = None, 0.0


def _answers(dk: FakeDeveloperKnowledge) -> int:
    return len(dk.tool_calls("answer_query"))


def post_for(slack: FakeSlack, question: str) -> str:
    """Everything the channel message answering `question` shows."""
    for call in slack.calls_to("chat.postMessage"):
        shown = json.dumps([call.args.get("text"), call.args.get("blocks")], ensure_ascii=False)
        if question in shown:
            return shown
    raise AssertionError(f"no message answers {question!r}")


# --- one bot, two processes -----------------------------------------------------------------
def test_a_retried_event_sent_to_the_other_replica_is_answered_once(
    pair: tuple[ServedBot, ServedBot], slack: FakeSlack, dk: FakeDeveloperKnowledge
) -> None:
    """Slack delivers a mention to A and its retry (same event_id, X-Slack-Retry-Num: 1) to
    B: B acknowledges and drops it; one answer, one answer_query call."""
    a, b = pair
    # the pair serves the whole module: count from here
    dropped = b.counter("gdocs_requests_total", kind="dedupe", outcome="duplicate")
    answered = a.counter("gdocs_requests_total", kind="mention", outcome="ok")
    mentions_on_b = b.counter("gdocs_requests_total", kind="mention")
    body = a.mention_body(
        slack, "how do I create a bucket in Europe?", event_id="EvRetried01", ts="1710000000.1"
    )
    assert 200 == a.event(body).status
    assert 200 == b.event(body, retry_num=1).status

    b.wait_until(
        lambda: (
            b.counter("gdocs_requests_total", kind="dedupe", outcome="duplicate") == dropped + 1
        ),
        "B to drop the retry as a duplicate",
    )
    a.wait_until(
        lambda: a.counter("gdocs_requests_total", kind="mention", outcome="ok") == answered + 1,
        "A to answer the mention",
    )
    assert 1 == len(slack.calls_to("chat.postMessage"))
    assert mentions_on_b == b.counter("gdocs_requests_total", kind="mention")
    assert 1 == _answers(dk)


def test_a_question_answered_by_one_replica_is_a_cache_hit_on_the_other(
    pair: tuple[ServedBot, ServedBot], slack: FakeSlack, dk: FakeDeveloperKnowledge
) -> None:
    """A answers; the same question (in other words) through B is served from the shared
    cache: one answer_query call for two answers."""
    a, b = pair
    hits = b.counter("gdocs_cache_total", cache="answer", result="hit")
    a.command(slack, "How do I create a Cloud Storage bucket?")
    slack.wait_for("chat.postMessage", 1, timeout=20)
    b.command(slack, "how to create cloud storage buckets", user="UOTHER1")
    slack.wait_for("chat.postMessage", 2, timeout=20)

    assert 1 == _answers(dk)
    assert hits + 1 == b.counter("gdocs_cache_total", cache="answer", result="hit")
    assert "Here is how" in post_for(slack, "how to create cloud storage buckets")


def test_identical_questions_at_both_replicas_at_once_cost_one_call(
    pair: tuple[ServedBot, ServedBot], slack: FakeSlack, dk: FakeDeveloperKnowledge
) -> None:
    """The same question reaches A and B while the first answer_query call is still out
    (1 s upstream): both get the answer, from one call."""
    a, b = pair
    dk.latency = 1.0
    question = "how do I move a bucket to another project?"
    a.command(slack, question)
    b.command(slack, question, user="UOTHER1")
    assert [] == slack.calls_to("chat.postMessage"), "both asked before either was answered"

    posts = slack.wait_for("chat.postMessage", 2, timeout=20)
    assert 1 == _answers(dk)
    assert all("Here is how" in post.args["text"] for post in posts)


def test_the_day_spent_on_one_replica_makes_the_other_search_without_answer_query(
    pair: tuple[ServedBot, ServedBot], slack: FakeSlack, dk: FakeDeveloperKnowledge
) -> None:
    """A's answer_query call is refused for the day; B's next question goes straight to
    search with the day note, although answer_query would now answer it."""
    a, b = pair
    refused = a.counter("gdocs_quota_refusals_total", limit="day")
    dk.quota_exhausted = "http"  # "… requests per day"
    a.command(slack, "how do I enable uniform bucket-level access?")
    slack.wait_for("chat.postMessage", 1, timeout=20)
    dk.quota_exhausted = None

    b.command(slack, "how do I enable object versioning?")
    slack.wait_for("chat.postMessage", 2, timeout=20)
    shown = post_for(slack, "how do I enable object versioning?")
    assert 1 == _answers(dk)
    assert "generated answers are used up" in shown
    assert "Here is how" not in shown
    assert refused + 1 == a.counter("gdocs_quota_refusals_total", limit="day")
    metrics = b.metrics()
    assert has_metric(metrics, "gdocs_answers_left_today"), metrics
    assert 0 == metric_value(metrics, "gdocs_answers_left_today")


def test_the_answer_ledger_is_shared_by_both_replicas(
    pair: tuple[ServedBot, ServedBot], slack: FakeSlack, dk: FakeDeveloperKnowledge
) -> None:
    """Two answers through A: `/gdocs quota` through B counts them, for the team and for the
    asker, and so does B's /metrics."""
    a, b = pair
    a.command(slack, "how do I list objects in a bucket?")
    a.command(slack, "how do I copy objects between buckets?")
    slack.wait_for("chat.postMessage", 2, timeout=20)

    status = b.command(slack, "quota")
    assert status.key is not None
    [shown] = slack.wait_for_responses(status.key, 1)
    text = json.dumps(shown, ensure_ascii=False)
    assert "ephemeral" == shown["response_type"]
    assert "*48* of 50 left for the team" in text
    assert "Yours today: *8* of 10 left" in text
    assert 2 == _answers(dk)
    metrics = b.metrics()
    assert has_metric(metrics, "gdocs_answers_left_today"), metrics
    assert 48 == metric_value(metrics, "gdocs_answers_left_today")


def test_both_replicas_keep_answering_through_a_redis_outage_and_share_again_after(
    pair: tuple[ServedBot, ServedBot],
    slack: FakeSlack,
    dk: FakeDeveloperKnowledge,
    redis_server: RedisServer,
) -> None:
    """Redis stops: both replicas acknowledge within Slack's 3 s and answer; /readyz stays
    200 and says the store is down; /metrics counts the errors; `/gdocs quota` says it cannot
    tell (one replica's own counts are not the team's). Redis comes back (empty):
    both use it again by themselves, so A's next answer is a cache hit on B."""
    a, b = pair
    redis_server.stop()
    try:
        acks = [
            a.command(slack, "how do I delete a bucket safely?"),
            b.command(slack, "how do I rename a bucket?", user="UOTHER1"),
        ]
        assert all(ack.status == 200 for ack in acks)
        assert max(ack.elapsed for ack in acks) < ACK_BUDGET_SECONDS
        slack.wait_for("chat.postMessage", 2, timeout=20)
        assert "Here is how" in post_for(slack, "how do I rename a bucket?")

        status_key = b.command(slack, "quota").key
        assert status_key is not None
        [unknown] = slack.wait_for_responses(status_key, 1)
        assert "I can't read the answer quota right now" in unknown["text"]

        for bot in pair:
            status, report = bot.readyz()
            assert 200 == status
            assert (report["store"]["backend"], report["store"]["ok"]) == ("redis", False)
            metrics = bot.metrics()
            assert 'gdocs_store_up{backend="redis"} 0' in metrics
            assert has_metric(metrics, "gdocs_store_errors_total")
    finally:
        redis_server.start()

    for bot in pair:
        bot.wait_until(lambda bot=bot: bot.readyz()[1]["store"]["ok"], "the store to be back")
    assert 'gdocs_store_up{backend="redis"} 1' in a.metrics()
    calls = _answers(dk)
    a.command(slack, "how do I set a bucket's storage class?")
    slack.wait_for("chat.postMessage", 3, timeout=20)
    b.command(slack, "how do I set a bucket's storage class?", user="UOTHER1")
    slack.wait_for("chat.postMessage", 4, timeout=20)
    assert calls + 1 == _answers(dk)


def test_everything_the_replicas_keep_in_redis_expires(
    pair: tuple[ServedBot, ServedBot],
    slack: FakeSlack,
    dk: FakeDeveloperKnowledge,
    redis_server: RedisServer,
) -> None:
    """After a mention, commands, a keyword search and a day 429: every key is under
    STATE_PREFIX, in a known namespace, and has a TTL: at most about two days (a day's quota
    counters outlive its reset by a day; a Pacific day is up to 25 h long), except what a
    retention setting keeps longer (answers that take votes, each person's recent questions,
    the report's day counters: 30 days at most with the default FEEDBACK_RETENTION_DAYS)."""
    a, b = pair
    body = a.mention_body(slack, "how do I share a bucket?", event_id="EvTtl01", ts="1710000000.2")
    a.event(body)
    b.command(slack, "how do I create a Cloud Storage bucket?")
    b.command(slack, "bucket naming")  # a keyword lookup: search_documents
    slack.wait_for("chat.postMessage", 3, timeout=20)
    dk.quota_exhausted = "http"
    a.command(slack, "how do I audit bucket access?")
    slack.wait_for("chat.postMessage", 4, timeout=20)

    client = redis.Redis(port=redis_server.port)
    try:
        ttls = {key.decode(): client.pttl(key) for key in client.scan_iter(count=500)}
    finally:
        client.close()
    assert ttls
    kept_longer = ("gdocs:answer_record:", "gdocs:recent:", "gdocs:feedback:", "gdocs:report:")

    def bound(key: str) -> int:
        return 30 * 86_400_000 if key.startswith(kept_longer) else 49 * 3_600_000

    unbounded = {key: ttl for key, ttl in ttls.items() if not 0 < ttl <= bound(key)}
    assert {} == unbounded
    assert all(key.startswith("gdocs:") for key in ttls)
    kinds = {key.removeprefix("gdocs:").removeprefix("~window:").split(":")[0] for key in ttls}
    assert {"answer", "search", "quota", "profile", "thread"} <= kinds
    assert kinds <= {
        "answer",
        "search",
        "pay",
        "doc",
        "title",
        "pages",
        "dedupe",
        "rate",
        "profile",
        "thread",
        "quota",
        "lock",
        "work",
        "lease",
        "answer_record",
        "recent",
        "report",
        "upstream",
    }, kinds
