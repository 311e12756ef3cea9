"""`python -m bench.run --scenario rest`: Developer Knowledge's REST and MCP backends side by
side, in one run, against loopback fakes with the same latency and the same pages.

    python -m bench.run --scenario rest [--rest-questions N] [--smoke]

In process: the real docs service (`GoogleDocsService`, DEVELOPER_KNOWLEDGE_API=mcp and
=rest) on its own SQLite store, asking the same distinct questions in turn, one backend then
the other, as a streamed answer does (`ask` with `on_sources`, then `verify`), then each again
(answered from the cache). Per question: the time to the first source a stream can show
(REST: the early search's pages, `on_sources`; MCP: the answer's own sources), the time to the
answer and to the checked answer (what is posted), store round trips, upstream HTTP requests,
and CPU (the process's, less the fakes' threads). The MCP fake is bench/fakes.py's; the REST
fake is the test suite's (tests/fakes/dk_rest.py: Google's own types write its JSON). Then a
team's day (bench/rest_day.py) for the search units a minute that early sources add.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from aiohttp import web

from bench.fakes import FakeUpstream
from bench.results_file import update_results
from bot.models import SearchHit
from bot.settings import Settings
from bot.store import Codec, Op, SqliteStore, Store
from bot.upstream import GoogleDocsService
from tests.fakes.dk_rest import FakeDeveloperKnowledgeRest, RestAnswer
from tests.fakes.serving import ThreadedServer

T = TypeVar("T")
#: (label, backend, with early sources): the last shows what early sources cost REST
RIGS = (("MCP", "mcp", False), ("REST", "rest", True), ("REST, no early sources", "rest", False))
CONTENT = "# Guide\n\nRun `gcloud storage buckets create`."
FIRST = "ANSWER-{i}: run `gcloud storage buckets create`."
SECOND = "\n\n1. Open the console\n2. Click **Create**"


@dataclass(frozen=True)
class Latency:
    """Seconds each upstream call takes, the same on both fakes (the day scenario's)."""

    answer: float = 2.0
    search: float = 0.5
    doc: float = 0.1


def question(i: int) -> str:
    return f"How do I create a storage bucket for q{i} with gcloud?"


class CountingStore(Store):
    """A store that counts its round trips (every call reaches one of these)."""

    def __init__(self, inner: Store) -> None:
        self.inner, self.kind, self.calls = inner, inner.kind, 0

    async def batch(self, ops: Sequence[Op]) -> list[object]:
        self.calls += 1
        return await self.inner.batch(ops)

    async def get_many(self, keys: Sequence[str], codec: Codec[T]) -> list[T | None]:
        self.calls += 1
        return await self.inner.get_many(keys, codec)

    async def hit(self, key: str, limit: int, window: float, now: float) -> float | None:
        self.calls += 1
        return await self.inner.hit(key, limit, window, now)

    async def unhit(self, key: str, at: float) -> bool:
        self.calls += 1
        return await self.inner.unhit(key, at)

    async def window_events(self, key: str, window: float, now: float) -> list[float]:
        self.calls += 1
        return await self.inner.window_events(key, window, now)

    async def scan(self, prefix: str, codec: Codec[T], limit: int) -> list[tuple[str, T]]:
        self.calls += 1
        return await self.inner.scan(prefix, codec, limit)

    async def ping(self) -> None:
        await self.inner.ping()

    async def aclose(self) -> None:
        await self.inner.aclose()


@dataclass
class BenchMcp(FakeUpstream):
    """bench/fakes.py's MCP server with its own search latency; counts HTTP requests."""

    search_latency: float = 0.5
    http: int = 0

    async def _handle(self, request: web.Request) -> web.Response:
        self.http += 1
        return await super()._handle(request)

    async def _tool(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        if tool == "search_documents":
            saved, self.latency = self.latency, self.search_latency
            try:
                return await super()._tool(tool, args)
            finally:
                self.latency = saved
        return await super()._tool(tool, args)


def rest_fake(questions: int, latency: Latency) -> FakeDeveloperKnowledgeRest:
    """The REST face with MCP's pages and answers: two cited pages a question."""
    fake = FakeDeveloperKnowledgeRest()
    fake.delays = {
        "answerQuery": latency.answer,
        "searchDocumentChunks": latency.search,
        "batchGet": latency.doc,
        "get": latency.doc,
    }
    for i in range(questions):
        base = f"documents/docs.cloud.google.com/bench/q{i}"
        for part in ("a", "b"):
            fake.add_document(f"{base}/{part}", f"Guide {part}", CONTENT)
        first = FIRST.format(i=i)
        text = first + SECOND
        spans = [(0, len(first.encode()), [0]), (len(first.encode()) + 2, len(text.encode()), [1])]
        fake.answers[question(i)] = RestAnswer(text, spans, [f"{base}/a", f"{base}/b"])
    return fake


@dataclass
class Sample:
    first_source: float
    answer: float
    checked: float
    store: int
    upstream: int
    cpu: float
    early: bool


@dataclass
class Rig:
    """One backend: its service, its store's counter, and how to read its fake's requests."""

    backend: str
    early: bool
    service: GoogleDocsService
    store: CountingStore
    requests: Callable[[], int]
    #: upstream requests so far by tool or route
    routes: Callable[[], Counter[str]]
    samples: dict[str, list[Sample]] = field(default_factory=lambda: {"cold": [], "cached": []})
    by_phase: dict[str, Counter[str]] = field(default_factory=dict)


def _thread_cpu(threads: list[threading.Thread]) -> float:
    total = 0.0
    for t in threads:
        if t.ident is not None and t.is_alive():
            total += time.clock_gettime(time.pthread_getcpuclockid(t.ident))
    return total


async def _ask(rig: Rig, phase: str, text: str, fakes: list[threading.Thread]) -> Sample:
    routes0 = rig.routes()  # before the clocks start: the fake's list is read whole
    start, cpu0, fake0 = time.perf_counter(), time.process_time(), _thread_cpu(fakes)
    store0, up0 = rig.store.calls, rig.requests()
    early: list[float] = []

    async def on_sources(hits: tuple[SearchHit, ...]) -> None:
        early.append(time.perf_counter())

    callback = on_sources if rig.early else None
    answer = await rig.service.ask(text, asker="U1", on_sources=callback)
    answered = time.perf_counter()
    await rig.service.verify(answer)
    checked = time.perf_counter()
    cpu = time.process_time() - cpu0 - (_thread_cpu(fakes) - fake0)
    # the REST set-ups share one fake: each counts its own questions' requests
    rig.by_phase.setdefault(phase, Counter()).update(rig.routes() - routes0)
    first = early[0] if early and early[0] < answered else answered
    return Sample(
        first - start,
        answered - start,
        checked - start,
        rig.store.calls - store0,
        rig.requests() - up0,
        cpu,
        bool(early) and early[0] < answered,
    )


def _settings(backend: str, mcp_url: str, rest_url: str, db: Path) -> Settings:
    return Settings(
        google_api_key="bench-key",
        developer_knowledge_api=backend,
        developer_knowledge_mcp_url=mcp_url,
        developer_knowledge_rest_url=rest_url,
        state_url=f"sqlite:///{db}",
        # the ledger runs but never binds: this part measures a question, not the quota
        answer_quota_per_minute=10_000,
        answer_quota_per_day=100_000,
        answer_quota_per_user_per_day=0,
    )


async def measure(questions: int, latency: Latency, tmp: Path) -> dict[str, Rig]:
    mcp = BenchMcp(latency=latency.answer, doc_latency=latency.doc, search_latency=latency.search)
    rest = rest_fake(questions, latency)
    before = set(threading.enumerate())
    mcp_server = ThreadedServer(mcp.app()).start()
    rest.start()
    fakes = [t for t in threading.enumerate() if t not in before]
    mcp_url = f"http://127.0.0.1:{mcp_server.port}/mcp"

    def mcp_routes() -> Counter[str]:
        # MCP's session set-up (initialize, tools/list, notifications) beside its tool calls
        return mcp.calls + Counter({"MCP set-up": mcp.http - sum(mcp.calls.values())})

    def rest_routes() -> Counter[str]:
        return Counter(r.route for r in rest.requests)

    rigs: dict[str, Rig] = {}
    try:
        for n, (label, backend, early) in enumerate(RIGS):
            db = tmp / f"{n}-{backend}.db"
            settings = _settings(backend, mcp_url, rest.url, db)
            store = CountingStore(await SqliteStore.open(db, max_entries=5000))
            service = GoogleDocsService(settings, store=store)
            if service.backend != backend:
                raise SystemExit(f"DEVELOPER_KNOWLEDGE_API={backend} is not served by this tree")
            if backend == "mcp":
                count, routes = (lambda: mcp.http), mcp_routes
            else:
                count, routes = (lambda: len(rest.requests)), rest_routes
            rigs[label] = Rig(backend, early, service, store, count, routes)
        for phase in ("cold", "cached"):
            for i in range(questions):  # in turn, so drift in the machine's load hits all
                for rig in rigs.values():
                    rig.samples[phase].append(await _ask(rig, phase, question(i), fakes))
    finally:
        for rig in rigs.values():
            await rig.service.aclose()
            await rig.store.aclose()
        rest.stop()
        mcp_server.stop()
    return rigs


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def _rows(rigs: dict[str, Rig], phase: str) -> list[tuple[str, list[float], str]]:
    """(measure, one figure per rig, unit) of one phase: medians of times and CPU, means of
    counts (MCP's session is set up once, by the first question)."""

    def each(attr: str, scale: float = 1.0) -> list[float]:
        of = statistics.fmean if scale == 1.0 else _median
        return [of([getattr(s, attr) * scale for s in rig.samples[phase]]) for rig in rigs.values()]

    return [
        ("Time to the first source a stream shows", each("first_source", 1000), "ms"),
        ("Time to the answer", each("answer", 1000), "ms"),
        ("Time to the checked answer (posted)", each("checked", 1000), "ms"),
        ("Store round trips per question (mean)", each("store"), ""),
        ("Upstream HTTP requests per question (mean)", each("upstream"), ""),
        ("CPU per question", each("cpu", 1000), "ms"),
    ]


def _ratio(mcp: float, rest: float) -> str:
    return f"{rest / mcp:.2f} ×" if mcp else ("1.00 ×" if rest == mcp else "–")


def render_report(
    rigs: dict[str, Rig], day: str, *, argv: list[str], machine: str, latency: Latency
) -> str:
    n = len(rigs["MCP"].samples["cold"])
    early = sum(s.early for s in rigs["REST"].samples["cold"])
    lines = [
        "## REST beside MCP (`--scenario rest`)",
        "",
        f"`python -m bench.run {' '.join(argv)}` on {machine}. In process, the real docs "
        f"service on SQLite for each set-up, {n} distinct questions asked in turn (each "
        "set-up in turn), then each again from the cache; per question, medians of times "
        "and means of counts. "
        f"Both fakes take {latency.answer:g} s to answer, {latency.search:g} s to search, "
        f"{latency.doc:g} s for pages. A question is `ask` with `on_sources` (as a streamed "
        "answer asks; not in the last column) then `verify`. *First source*: REST's early "
        "search pages (`on_sources`), else the answer's own. CPU: the process's, less the fakes' "
        "threads. Absolute times vary with the shared VM's load; compare the ratios.",
        "",
        f"REST showed early sources before the answer in {early} of {n} cold questions.",
    ]
    for phase, title in (("cold", "New questions"), ("cached", "Asked again (cached)")):
        lines += [
            "",
            f"**{title}**",
            "",
            "| measure | MCP | REST | REST / MCP | REST, no early sources | … / MCP |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        for label, (m, *rest), unit in _rows(rigs, phase):
            fmt = ("{:,.1f} " + unit) if unit else "{:,.2f}"
            cells = [fmt.format(m)]
            for r in rest:
                cells += [fmt.format(r), _ratio(m, r)]
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
    lines += ["", "Upstream requests in all, by tool (MCP) or route (REST):", ""]
    for phase in ("cold", "cached"):
        for label, rig in rigs.items():
            seen = rig.by_phase.get(phase, Counter())
            calls = ", ".join(f"{k} {v}" for k, v in sorted(seen.items()) if v) or "none"
            lines.append(f"- {phase}, {label}: {calls}")
    if day:
        lines += ["", day]
    return "\n".join(lines) + "\n"


def run_rest_scenario(args: argparse.Namespace, *, argv: list[str], machine: str) -> int:
    from bench.rest_day import run_day

    questions = 2 if args.smoke else args.rest_questions
    latency = Latency(0.2, 0.05, 0.01) if args.smoke else Latency()
    with tempfile.TemporaryDirectory(prefix="gdocs-bench-rest-") as tmp:
        rigs = asyncio.run(measure(questions, latency, Path(tmp)))
        day = asyncio.run(run_day(Path(tmp), smoke=args.smoke))
    report = render_report(rigs, day, argv=argv, machine=machine, latency=latency)
    print(report)
    if not args.smoke:
        update_results(args.out, "rest", report)
        print(f"wrote {args.out}")
    return 0
