"""The REST scenario's team's day: do early sources keep search under its 100 a minute?

The day's question stream (bench/stream.py, seed 16: 300 questions in a 300 s day) through
the real docs service three ways at once, each on its own fake with Google's quotas for real
(answer_query 10 a rolling minute and 50 for the run, refused in Google's HTTP 429 form; on
REST also search, 100 a minute, taken by every AnswerQuery and search): MCP, REST without
early sources, REST with them (a mention is `ask`ed with `on_sources`: the Slack flow asks so
only for a streamed reply). Keyword and Pay questions are searches; follow-ups carry their
thread's question, as the flow joins them. Counted at the fakes: the most search units in any 60 s, and search's 429s.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.day import SMOKE_SHAPE
from bench.day_upstream import FOLLOW_UP_JOIN, DayUpstream, run_clock
from bench.stream import Question, StreamShape, day_stream
from bot.errors import GdocsError
from bot.models import Answer, SearchHit
from bot.settings import Settings
from bot.store import SqliteStore
from bot.upstream import GoogleDocsService
from tests.fakes.dk_rest import FakeDeveloperKnowledgeRest
from tests.fakes.quota import QuotaEnforcer
from tests.fakes.serving import ThreadedServer

SEED = 16
SEARCH_PER_MINUTE = 100
#: seconds a call takes once admitted (bench/day_upstream.py's)
LATENCY = {"answerQuery": 2.0, "searchDocumentChunks": 0.5, "batchGet": 0.1}
CONTENT = "# Guide\n\nRun `gcloud storage buckets create --location=eu`."


@dataclass
class Setup:
    name: str
    backend: str
    early: bool
    service: GoogleDocsService | None = None
    answers: list[Answer] = field(default_factory=list)
    early_shown: int = 0
    failed: int = 0


def _peak(times: list[float]) -> int:
    """The most events in any 60 s."""
    times, best, lo = sorted(times), 0, 0
    for hi, t in enumerate(times):
        while times[lo] <= t - 60:
            lo += 1
        best = max(best, hi - lo + 1)
    return best


def _calls(admitted: int, refused: list[str | None]) -> str:
    """ "50 + 3 (minute 3)": calls admitted, and refused by which limit."""
    if not refused:
        return f"{admitted} + 0"
    by = ", ".join(f"{limit} {refused.count(limit)}" for limit in sorted(set(map(str, refused))))
    return f"{admitted} + {len(refused)} ({by})"


def _query(q: Question, stream: list[Question]) -> str:
    if q.thread_of is None:
        return q.text
    return f"{stream[q.thread_of].text}{FOLLOW_UP_JOIN}{q.text}"


async def _one(setup: Setup, q: Question, stream: list[Question], start: float) -> None:
    await asyncio.sleep(max(0.0, start + q.at - time.monotonic()))
    service = setup.service
    assert service is not None
    shown: list[bool] = []

    async def on_sources(hits: tuple[SearchHit, ...]) -> None:
        shown.append(True)

    try:
        if q.kind == "keyword":
            answer = await service.search(q.text)
        elif q.kind == "pay":
            answer = await service.pay(q.text)
        else:
            # as the flow asks: only a streamed reply (a mention) has a timeline to show them
            callback = on_sources if setup.early and q.surface == "mention" else None
            answer = await service.ask(_query(q, stream), asker=q.asker, on_sources=callback)
            answer = await service.verify(answer)
    except GdocsError:  # a timeout or an error from Google: the report counts them
        setup.failed += 1
        return
    setup.answers.append(answer)
    setup.early_shown += bool(shown)


class _HttpRefusals(DayUpstream):
    """The day's MCP fake refusing as the REST fake does, always in Google's HTTP 429 with
    its RetryInfo (the day scenario takes turns with two other forms): one 429 for both."""

    async def _refuse(self, msg: Any, refusal: Any, topic: str, arrived: float, ctx: bool) -> Any:
        self._refusals = 0  # FORMS[0]: "http"
        return await super()._refuse(msg, refusal, topic, arrived, ctx)


def _rest_fake(stream: list[Question], clock: Any) -> FakeDeveloperKnowledgeRest:
    fake = FakeDeveloperKnowledgeRest()
    fake.delays = dict(LATENCY)  # spent after the quota counted the call, as Google does
    fake.quota = QuotaEnforcer(per_minute=10, per_day=50, clock=clock)
    fake.search_quota = QuotaEnforcer(per_minute=SEARCH_PER_MINUTE, clock=clock)
    for topic in sorted({q.topic for q in stream}):
        for part in ("a", "b"):
            name = f"documents/docs.cloud.google.com/bench/{topic}/{part}"
            fake.add_document(name, f"Guide {topic} {part}", CONTENT)
    return fake


async def run_day(tmp: Path, *, smoke: bool) -> str:
    """The day's table (Markdown)."""
    shape = SMOKE_SHAPE if smoke else StreamShape()
    stream = day_stream(shape, seed=SEED)
    clock = run_clock()
    mcp = _HttpRefusals(
        quota=QuotaEnforcer(per_minute=10, per_day=50, clock=clock),
        topics={" ".join(q.text.split()): q.topic for q in stream},
    )
    mcp_server = ThreadedServer(mcp.app()).start()
    rest_plain, rest_early = _rest_fake(stream, clock).start(), _rest_fake(stream, clock).start()
    setups = [
        Setup("MCP", "mcp", early=False),
        Setup("REST, no early sources", "rest", early=False),
        Setup("REST, early sources", "rest", early=True),
    ]
    fakes = {"MCP": mcp, "REST, no early sources": rest_plain, "REST, early sources": rest_early}
    try:
        for setup in setups:
            db = tmp / f"day-{setup.backend}-{setup.early}.db"
            rest = fakes[setup.name]
            settings = Settings(
                google_api_key="bench-key",
                developer_knowledge_api=setup.backend,
                developer_knowledge_mcp_url=f"http://127.0.0.1:{mcp_server.port}/mcp",
                developer_knowledge_rest_url=getattr(rest, "url", "http://127.0.0.1:9/v1"),
                state_url=f"sqlite:///{db}",
            )
            # the store's clock is the run's: on the wall clock it would find the ledger's
            # minute (stamped by the run's clock, months back) expired and sweep it away
            store = await SqliteStore.open(db, max_entries=5000, clock=lambda: clock().timestamp())
            setup.service = GoogleDocsService(settings, store=store, clock=clock)
        start = time.monotonic()
        await asyncio.gather(*(_one(s, q, stream, start) for s in setups for q in stream))
    finally:
        for setup in setups:
            if setup.service is not None:
                await setup.service.aclose()
        mcp_server.stop()
        rest_plain.stop()
        rest_early.stop()
    return _report(shape, stream, setups, mcp, rest_plain, rest_early)


def _report(
    shape: StreamShape,
    stream: list[Question],
    setups: list[Setup],
    mcp: DayUpstream,
    *rest: FakeDeveloperKnowledgeRest,
) -> str:
    def units(fake: FakeDeveloperKnowledgeRest) -> list[float]:
        assert fake.search_quota is not None
        got = [t.timestamp() for t in fake.search_quota.admitted]
        return got + [r.at.timestamp() for r in fake.search_quota.refused]

    peaks = [mcp.peak_search_bucket(), *(_peak(units(f)) for f in rest)]
    refused = ["not enforced", *(str(len(f.search_quota.refused)) for f in rest if f.search_quota)]
    answer_calls = [_calls(len(mcp.admitted()), [c.refused for c in mcp.refused()])]
    answer_calls += [
        _calls(len(f.quota.admitted), [r.limit for r in f.quota.refused]) for f in rest if f.quota
    ]
    searches = [
        len(mcp.admitted("search_documents")),
        *(len(f.requests_for("searchDocumentChunks")) for f in rest),
    ]
    streamed = sum(q.surface == "mention" and q.kind in ("question", "followup") for q in stream)
    rows: list[tuple[str, list[Any]]] = [
        ("Questions that got an answer of some kind", [len(s.answers) for s in setups]),
        ("… generated", [sum(a.kind == "answer" for a in s.answers) for s in setups]),
        ("… failed", [s.failed for s in setups]),
        ("AnswerQuery / answer_query calls: admitted + refused (429)", answer_calls),
        ("Search requests", searches),
        ("Questions shown early sources", [s.early_shown for s in setups]),
        (f"**Search units, most in any 60 s** (limit {SEARCH_PER_MINUTE})", peaks),
        ("Search refused (429)", refused),
    ]
    lines = [
        f"**A team's day** (`bench/rest_day.py`): seed {SEED}, {len(stream)} questions over "
        f"{shape.seconds:g} s ({streamed} mentions and follow-ups, streamed in Slack); "
        "answers 2 s, search 0.5 s; the bot's default quotas.",
        "",
        "| measure | " + " | ".join(s.name for s in setups) + " |",
        "|---|" + "---:|" * len(setups),
    ]
    lines += [f"| {label} | " + " | ".join(str(v) for v in values) + " |" for label, values in rows]
    return "\n".join(lines)
