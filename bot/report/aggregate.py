"""The report: `collect` reads the store (bounded reads; a store that does not answer raises
StoreError: a report is never made of nothing), `aggregate` makes the report (pure, no clock)."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from bot.feedback import ANSWER_PREFIX, EXPORT_LIMIT, VOTE_PREFIX, AnswerRecord, VoteRecord
from bot.quota import pacific_day
from bot.report import tally
from bot.report.tally import GAP_WORDS, DayRow, GapRow, PageRow, Report, TopicRow, VoteRow
from bot.store import JSON, ModelCodec, Store
from bot.text import strip_controls, truncate
from bot.upstream import question_key

#: rows kept in the topics, gaps and pages tables
MAX_ROWS = 25
#: 👎 comments and flagged commands shown per gap
MAX_COMMENTS = 5
EXAMPLE_CHARS = 200
TOPIC_CHARS = 120
COMMENT_CHARS = 300
#: the longest window a report covers (the store keeps 30 days anyway)
MAX_WINDOW_DAYS = 366
#: per-day counters read at most (a day has a few dozen names; 30 days are kept)
COUNTER_LIMIT = 20_000
_ANSWER = ModelCodec(AnswerRecord)
_VOTE = ModelCodec(VoteRecord)
_MENTION_RE = re.compile(r"<[@!][^>]*>")
_CHANNEL_RE = re.compile(r"<#[A-Z0-9]+(?:\|([^>]*))?>")
#: Slack user ids (U…, W…, with a digit) typed or pasted as plain words
_USER_ID_RE = re.compile(r"\b[UW](?=[A-Z0-9]*[0-9])[A-Z0-9]{6,}\b")
_VOTE_KINDS = {"answer": "generated", "search": "search", "pay": "pay"}


@dataclass(frozen=True)
class Collected:
    """What the store holds for a report, as it is (the aggregation filters by day)."""

    answers: tuple[AnswerRecord, ...] = ()
    votes: tuple[VoteRecord, ...] = ()
    #: (pacific day, counter name, count)
    counters: tuple[tuple[str, str, int], ...] = ()


async def collect(store: Store, *, limit: int = EXPORT_LIMIT) -> Collected:
    """Read what a report needs from `store` (three scans, nothing written)."""
    answers = [record for _, record in await store.scan(ANSWER_PREFIX, _ANSWER, limit)]
    votes = [vote for _, vote in await store.scan(VOTE_PREFIX, _VOTE, limit)]
    counters: list[tuple[str, str, int]] = []
    for key, value in await store.scan(tally.PREFIX, JSON, COUNTER_LIMIT):
        day, _, name = key.removeprefix(tally.PREFIX).partition(":")
        if len(day) == 10 and name and isinstance(value, int) and not isinstance(value, bool):
            counters.append((day, name, value))  # else another version's key, or no counter
    return Collected(tuple(answers), tuple(votes), tuple(counters))


@dataclass(frozen=True)
class Window:
    """Pacific days from `since` to `until`, both included."""

    since: date
    until: date

    def days(self) -> list[str]:
        count = (self.until - self.since).days + 1
        return [(self.since + timedelta(days=i)).isoformat() for i in range(max(count, 0))]

    def holds(self, moment: datetime) -> bool:
        return self.since.isoformat() <= pacific_day(moment) <= self.until.isoformat()


def without_people(text: str) -> str:
    """`text` on one line, with mentions and user ids replaced (a report names nobody)."""
    text = _CHANNEL_RE.sub(lambda m: "#" + (m.group(1) or "channel"), text)
    text = _MENTION_RE.sub("@someone", text)
    text = _USER_ID_RE.sub("@someone", text)
    return " ".join(strip_controls(text).split())


def topic_of(question: str) -> str:
    return truncate(question_key(without_people(question)), TOPIC_CHARS) or "(empty)"


def aggregate(
    collected: Collected, window: Window, *, quota_per_day: int, by_channel: bool = False
) -> Report:
    answers = sorted(
        (a for a in collected.answers if window.holds(a.posted_at)),
        key=lambda a: (a.posted_at, a.answer_id),
    )
    votes = [v for v in collected.votes if window.holds(v.time)]
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for day, name, value in collected.counters:
        counts[day][name] += max(value, 0)
    in_window = [(day, counts.get(day, Counter())) for day in window.days()]
    where = Counter(_channel(a.channel) for a in answers if a.channel)
    return Report(
        since=window.since.isoformat(),
        until=window.until.isoformat(),
        quota_per_day=quota_per_day,
        days=tuple(_day_row(day, c) for day, c in in_window),
        total=_day_row("total", sum((c for _, c in in_window), Counter())),
        topics=_topics(answers),
        gaps=_gaps(answers, votes),
        pages=_pages(answers),
        votes=_votes(votes),
        channels=len(where),
        by_channel={channel: where[channel] for channel in _ranked(where)} if by_channel else None,
        by_product=_by_product(sum((c for _, c in in_window), Counter())),
    )


def _by_product(c: Counter[str]) -> dict[str, int]:
    """Questions per products asked ("android, firebase"), after those asked of all of them."""
    scoped: Counter[str] = Counter()
    for name, n in c.items():
        if name.startswith(tally.SCOPE_PREFIX) and n:
            scoped[name.removeprefix(tally.SCOPE_PREFIX).replace("+", ", ")] += n
    if not scoped:
        return {}
    unscoped = max(c[tally.QUESTIONS] - scoped.total(), 0)
    return {tally.UNSCOPED: unscoped} | {key: scoped[key] for key in _ranked(scoped)}


def _day_row(day: str, c: Counter[str]) -> DayRow:
    why = {w: c[f"search:{w}"] for w in tally.WHY_WORDS}
    return DayRow(
        day=day,
        questions=c[tally.QUESTIONS],
        generated=c[tally.GENERATED],
        search_only=sum(why.values()),
        search_only_why=why,
        failed=c[tally.FAILED],
        rate_limited=c[tally.RATE_LIMITED],
        answer_query={"made": c[tally.ANSWER_QUERY_MADE], "refused": c[tally.ANSWER_QUERY_REFUSED]},
        reuse={kind: c[f"reuse:{kind}"] for kind in tally.REUSE_KINDS},
        team={"used": c[tally.TEAM_USED], "saved": c[tally.TEAM_SAVED]},
        guest_refused=c[tally.GUEST_REFUSED],
    )


def _ranked(counts: Counter[str]) -> list[str]:
    """Keys most frequent first, then alphabetically (a stable order for equal counts)."""
    return sorted(counts, key=lambda key: (-counts[key], key))[:MAX_ROWS]


def _topics(answers: list[AnswerRecord]) -> tuple[TopicRow, ...]:
    asked: Counter[str] = Counter()
    answered: dict[str, Counter[str]] = defaultdict(Counter)  # by tally.classify
    example: dict[str, str] = {}
    for record in answers:
        topic = topic_of(record.question)
        asked[topic] += 1
        answered[topic][
            tally.classify(record.kind, record.fallback, record.route, record.tool)
        ] += 1
        example[topic] = _example(record.question)  # the latest wording
    rows = []
    for t in _ranked(asked):
        generated, team = answered[t][tally.GENERATED], answered[t][tally.TEAM_USED]
        rows.append(TopicRow(t, asked[t], generated, asked[t] - generated - team, example[t], team))
    return tuple(rows)


def _gap_reasons(record: AnswerRecord) -> list[str]:
    reasons = []
    if record.kind != "answer":
        if record.route == "answer" or (record.fallback or "").startswith("answer_quota"):
            reasons.append("search_only")  # wanted an answer (a keyword lookup did not)
        if record.hits == 0:
            reasons.append("no_hit")
    not_found = (record.checks or {}).get("not_found")  # a count, if the summary is sound
    if isinstance(not_found, int) and not isinstance(not_found, bool) and not_found > 0:
        reasons.append("not_found")
    return reasons


def _flagged(checks: dict[str, Any] | None) -> list[str]:
    flagged = (checks or {}).get("flagged")
    if not isinstance(flagged, list | tuple):
        return []
    return [truncate(without_people(one), COMMENT_CHARS) for one in flagged if isinstance(one, str)]


def _gaps(answers: list[AnswerRecord], votes: list[VoteRecord]) -> tuple[GapRow, ...]:
    reasons: dict[str, Counter[str]] = defaultdict(Counter)
    example: dict[str, str] = {}
    comments: dict[str, list[str]] = defaultdict(list)
    flagged: dict[str, list[str]] = defaultdict(list)
    for record in answers:
        topic = topic_of(record.question)
        for reason in _gap_reasons(record):
            reasons[topic][reason] += 1
            example[topic] = _example(record.question)
        flagged[topic].extend(_flagged(record.checks))
    for vote in sorted(votes, key=lambda v: (v.time, v.answer_id)):
        if vote.vote != "down":
            continue
        topic = topic_of(vote.question)
        reasons[topic]["thumbs_down"] += 1
        example[topic] = _example(vote.question)
        if vote.comment.strip():
            comments[topic].append(truncate(without_people(vote.comment), COMMENT_CHARS))
    events = Counter({topic: r.total() for topic, r in reasons.items()})
    return tuple(
        GapRow(
            topic=t,
            count=events[t],
            reasons={r: reasons[t][r] for r in GAP_WORDS if reasons[t][r]},
            example=example[t],
            comments=tuple(dict.fromkeys(comments[t]))[:MAX_COMMENTS],
            flagged_commands=tuple(dict.fromkeys(flagged[t]))[:MAX_COMMENTS],
        )
        for t in _ranked(events)
    )


def _pages(answers: list[AnswerRecord]) -> tuple[PageRow, ...]:
    cited: Counter[str] = Counter()
    listed: Counter[str] = Counter()
    for record in answers:
        into = cited if record.kind == "answer" else listed
        for url in dict.fromkeys(record.references):
            into[url] += 1
    ranked = sorted(cited + listed, key=lambda url: (-cited[url], -listed[url], url))[:MAX_ROWS]
    return tuple(PageRow(url, cited[url], listed[url]) for url in ranked)


def _votes(votes: list[VoteRecord]) -> tuple[VoteRow, ...]:
    up: Counter[str] = Counter()
    down: Counter[str] = Counter()
    for vote in votes:
        kind = "team" if vote.tool == tally.TEAM_TOOL else _VOTE_KINDS.get(vote.kind, "other")
        (up if vote.vote == "up" else down)[kind] += 1
    kinds = [k for k in (*_VOTE_KINDS.values(), "team", "other") if up[k] or down[k]]
    return tuple(VoteRow(k, up[k], down[k]) for k in kinds)


def _channel(channel: str) -> str:
    """A channel id, or "direct messages" for any DM (a DM is someone's conversation)."""
    return "direct messages" if channel.startswith("D") else channel


def _example(question: str) -> str:
    return truncate(without_people(question), EXAMPLE_CHARS, at_word=True)
