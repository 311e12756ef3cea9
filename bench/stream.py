"""A team's day of questions, reproducible from a seed (the day scenario's input).

    questions = day_stream(StreamShape(), seed=16)

About 300 questions from 60 askers over ~120 topics (bench/topics.py) with a Zipf-like
popularity (a few asked by many), each asking in one of its forms: an exact repeat of an
earlier wording, a form-only paraphrase (the bot's question key should merge it), or a
reworded one (it should not, and cannot); short keyword lookups, a few Pay questions,
follow-ups in the thread of an earlier answer, and two bursts: the stand-up (15 people within
a minute) and an incident (everyone asks why production returns 503s). A quarter are
`/gdocs` commands, the rest @mentions; some mentions are retried by "Slack" (the balancer
sends the retry to the other replica), at once or a second later.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Literal

from bench import topics as catalogue

# the bot's own rule, used here only to label the stream (which wordings are form-only
# paraphrases), never to judge the answers
from bench.driver import question_key
from bench.topics import Topic

Surface = Literal["mention", "command"]
Retry = Literal["none", "race", "late"]
#: a person asks at most this many questions in any minute (the bot's per-user rate limit
#: is 10 a minute by default: the stream stays under it, so every question gets an answer)
MAX_PER_ASKER_PER_MINUTE = 6


@dataclass(frozen=True)
class StreamShape:
    """How big the day is. The defaults are the issue's day; the smoke run uses a tiny one."""

    questions: int = 300
    askers: int = 60
    topics: int = 120
    seconds: float = 300.0
    standup: int = 15
    #: the stand-up's questions arrive within this many seconds
    standup_seconds: float = 45.0
    incident: int = 8
    followups: int = 16
    keyword_share: float = 0.1
    pay: int = 8
    zipf: float = 1.0
    command_share: float = 0.25
    retry_share: float = 0.16
    channels: int = 6


@dataclass(frozen=True)
class Question:
    idx: int
    #: seconds after the start of the day
    at: float
    asker: str
    text: str
    topic: str
    kind: str  # question | keyword | pay | followup
    #: canonical | exact (a wording asked before) | form (a form-only paraphrase) | reworded
    form: str
    surface: Surface
    channel: str
    #: the question whose thread this follow-up is asked in
    thread_of: int | None = None
    retry: Retry = "none"
    burst: str | None = None


def build_topics(shape: StreamShape) -> list[Topic]:
    """The day's topics: follow-ups, Pay and keyword topics, the rest questions."""
    n_follow = min(shape.followups, len(catalogue.FOLLOW_UPS))
    n_pay = min(max(1, shape.pay // 2), len(catalogue.PAY))
    n_keyword = min(max(1, round(shape.topics * shape.keyword_share)), len(catalogue.KEYWORDS))
    n_question = max(2, shape.topics - n_follow - n_pay - n_keyword)
    general = [catalogue.general_topic(f"g{i:02d}", t) for i, t in enumerate(catalogue.GENERAL)]
    tasks = [catalogue.task_topic(f"t{i:02d}", *task) for i, task in enumerate(catalogue.TASKS)]
    # the incident first, then tasks and general questions interleaved
    pool = [general[catalogue.INCIDENT]]
    rest = general[1:]
    for i in range(max(len(tasks), len(rest))):
        pool += tasks[i : i + 1] + rest[i : i + 1]
    if n_question > len(pool):
        raise ValueError(f"the catalogue has {len(pool)} question topics, not {n_question}")
    chosen = pool[:n_question]
    chosen += [
        catalogue.keyword_topic(f"k{i:02d}", t)
        for i, t in enumerate(catalogue.KEYWORDS[:n_keyword])
    ]
    chosen += [catalogue.pay_topic(f"p{i:02d}", t) for i, t in enumerate(catalogue.PAY[:n_pay])]
    chosen += [
        catalogue.followup_topic(f"f{i:02d}", t)
        for i, t in enumerate(catalogue.FOLLOW_UPS[:n_follow])
    ]
    check_topics(chosen)
    return chosen


def check_topics(found: list[Topic]) -> None:
    """The catalogue means what it says: form-only paraphrases share their topic's key,
    reworded ones and different topics do not (a stream bug otherwise, not the bot's)."""
    owner: dict[str, str] = {}
    for topic in found:
        key = question_key(topic.canonical)
        if key in owner:
            raise ValueError(f"topics {owner[key]} and {topic.id} share the key {key!r}")
        owner[key] = topic.id
        for form in topic.forms:
            if question_key(form) != key:
                raise ValueError(f"{form!r} is not a form-only paraphrase of {topic.canonical!r}")
        for other in topic.reworded:
            if question_key(other) == key:
                raise ValueError(f"{other!r} is only a form of {topic.canonical!r}")


def _zipf_weights(count: int, exponent: float) -> list[float]:
    return [1.0 / (rank**exponent) for rank in range(1, count + 1)]


def _arrival_times(rng: random.Random, count: int, seconds: float) -> list[float]:
    """`count` times in the day, busier in the morning, a lull at lunch (piecewise density)."""
    pieces = ((0.0, 0.1, 1.0), (0.1, 0.4, 1.4), (0.4, 0.5, 0.5), (0.5, 0.8, 1.1), (0.8, 0.95, 0.7))
    weights = [(b - a) * d for a, b, d in pieces]
    out = []
    for _ in range(count):
        a, b, _d = rng.choices(pieces, weights)[0]
        out.append(rng.uniform(a, b) * seconds)
    return sorted(out)


class _Wordings:
    """Picks how each asking is typed, remembering what was asked before."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.asked: dict[str, list[str]] = {}

    def pick(self, topic: Topic) -> tuple[str, str]:
        before = self.asked.setdefault(topic.id, [])
        roll = self.rng.random()
        if not before:
            text, form = (
                (topic.canonical, "canonical")
                if roll < 0.5 or not topic.forms
                else (
                    self.rng.choice(topic.forms),
                    "form",
                )
            )
        elif roll < 0.35:
            text, form = self.rng.choice(before), "exact"
        elif roll < 0.85 and topic.forms:
            text, form = self.rng.choice((topic.canonical, *topic.forms)), "form"
        elif topic.reworded:
            text, form = self.rng.choice(topic.reworded), "reworded"
        else:
            text, form = self.rng.choice(before), "exact"
        if form != "exact" and text in before:
            form = "exact"
        before.append(text)
        return text, form


def day_stream(shape: StreamShape, seed: int) -> list[Question]:
    """The day's questions, sorted by time (follow-ups are timed from their root: the driver
    sends each once its root has been answered)."""
    rng = random.Random(seed)
    found = build_topics(shape)
    questions_t = [t for t in found if t.kind == "question"]
    incident, others = questions_t[0], questions_t[1:]
    rng.shuffle(others)  # popularity is not catalogue order: near-misses differ in it
    keywords = [t for t in found if t.kind == "keyword"]
    pays = [t for t in found if t.kind == "pay"]
    follows = [t for t in found if t.kind == "followup"]

    n_follow = len(follows)
    n_keyword = max(1, round(shape.questions * shape.keyword_share))
    n_pay = max(1, min(shape.pay, shape.questions // 10))
    n_burst = shape.standup + shape.incident
    n_plain = shape.questions - n_follow - n_keyword - n_pay - n_burst
    if n_plain < len(others):
        raise ValueError("too few questions for the topics: every topic is asked at least once")

    # every topic asked once, the rest by popularity (Zipf over the shuffled order)
    plain = list(others) + rng.choices(
        others, _zipf_weights(len(others), shape.zipf), k=n_plain - len(others)
    )
    plain += list(keywords) + rng.choices(
        keywords, _zipf_weights(len(keywords), shape.zipf), k=n_keyword - len(keywords)
    )
    plain += [pays[i % len(pays)] for i in range(n_pay)]
    rng.shuffle(plain)
    times = _arrival_times(rng, len(plain), shape.seconds)
    start = min(20.0, shape.seconds * 0.05)
    standup_at = sorted(
        rng.uniform(start, start + shape.standup_seconds) for _ in range(shape.standup)
    )
    standup = rng.choices(others, _zipf_weights(len(others), shape.zipf), k=shape.standup)
    incident_start = shape.seconds * 0.6
    incident_at = sorted(
        rng.uniform(incident_start, incident_start + 15) for _ in range(shape.incident)
    )

    slots: list[tuple[float, Topic, str | None]] = [
        (t, tp, None) for t, tp in zip(times, plain, strict=True)
    ]
    slots += [(t, tp, "standup") for t, tp in zip(standup_at, standup, strict=True)]
    slots += [(t, incident, "incident") for t in incident_at]
    slots.sort(key=lambda s: s[0])
    return _assign(rng, shape, slots, follows)


def _assign(
    rng: random.Random,
    shape: StreamShape,
    slots: list[tuple[float, Topic, str | None]],
    follows: list[Topic],
) -> list[Question]:
    askers = [f"U{i:03d}" for i in range(1, shape.askers + 1)]
    activity = _zipf_weights(len(askers), 0.6)
    recent: dict[str, list[float]] = {a: [] for a in askers}
    wordings = _Wordings(rng)
    out: list[Question] = []
    unused = list(askers)
    rng.shuffle(unused)
    for at, topic, burst in slots:
        asker = _asker(rng, askers, activity, recent, unused, at, burst, out)
        text, form = wordings.pick(topic)
        command = topic.kind != "followup" and rng.random() < shape.command_share
        idx = len(out)
        channel = f"CQ{idx:04d}" if command else f"CTEAM{rng.randrange(shape.channels) + 1}"
        retry: Retry = "none"
        if not command and rng.random() < shape.retry_share:
            retry = "race" if rng.random() < 0.5 else "late"
        out.append(
            Question(
                idx,
                at,
                asker,
                text,
                topic.id,
                topic.kind,
                form,
                "command" if command else "mention",
                channel,
                None,
                retry,
                burst,
            )
        )
    return _with_followups(rng, shape, out, follows)


def _asker(
    rng: random.Random,
    askers: list[str],
    activity: list[float],
    recent: dict[str, list[float]],
    unused: list[str],
    at: float,
    burst: str | None,
    so_far: list[Question],
) -> str:
    """Someone who has not asked yet (so all 60 ask), else by activity; never more than
    MAX_PER_ASKER_PER_MINUTE in a minute; one question each in a burst."""
    in_burst = {q.asker for q in so_far if burst is not None and q.burst == burst}
    for _ in range(1000):
        asker = unused.pop() if unused else rng.choices(askers, activity)[0]
        window = [t for t in recent[asker] if t > at - 60]
        if len(window) < MAX_PER_ASKER_PER_MINUTE and asker not in in_burst:
            recent[asker] = [*window, at]
            return asker
    raise ValueError("no asker is free: too many questions for the askers in one minute")


def _with_followups(
    rng: random.Random, shape: StreamShape, questions: list[Question], follows: list[Topic]
) -> list[Question]:
    roots = [
        q
        for q in questions
        if q.surface == "mention"
        and q.kind == "question"
        and q.burst is None
        and q.at < shape.seconds * 0.85
    ]
    chosen = sorted(rng.sample(roots, min(len(follows), len(roots))), key=lambda q: q.idx)
    out = list(questions)
    for root, topic in zip(chosen, follows, strict=False):
        asker = root.asker if rng.random() < 0.7 else rng.choice([q.asker for q in questions])
        at = min(shape.seconds, root.at + rng.uniform(5, 25))
        out.append(
            Question(
                len(out),
                at,
                asker,
                topic.canonical,
                topic.id,
                "followup",
                "canonical",
                "mention",
                root.channel,
                root.idx,
            )
        )
    return out
