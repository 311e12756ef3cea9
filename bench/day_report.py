"""The day scenario's section of bench/RESULTS.md: the figures side by side, and the targets."""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable
from typing import Any

Figures = dict[str, Any]


def _pc(x: float) -> str:
    return "–" if math.isnan(x) else f"{100 * x:.0f} %"


def _num(x: float, digits: int = 1) -> str:
    return "–" if isinstance(x, float) and math.isnan(x) else f"{x:.{digits}f}"


def _ratio(t: Figures, base: Figures | None) -> str:
    if base is None or not base["generated_share"]:
        return "–"
    return f"{t['generated_share'] / base['generated_share']:.2f} ×"


def _kinds(t: Figures) -> str:
    return ", ".join(f"{kind} {g}/{n}" for kind, (g, n) in t["by_kind"].items())


def _reuse(t: Figures) -> str:
    r = t["reuse"]
    parts = [
        f"{k} {r.get(k, 0)}" for k in ("fresh", "exact", "normalised", "in_flight", "reworded")
    ]
    return ", ".join(parts)


def _cache(t: Figures) -> str:
    series = t["metrics_cache"]
    return "; ".join(f"{k} {v:.0f}" for k, v in series.items()) or "(no answer-cache series)"


def _classes(t: Figures) -> str:
    return "; ".join(
        f"{k}: {n}, {_num(p50)} / {_num(p99)}"
        for k, (n, p50, p99) in t["overhead_by_class"].items()
    )


def _team_given(t: Figures) -> str:
    if not t["team_saved_questions"]:
        return "– (none saved)"
    return f"{t['team']} ({t['bot_team_used']} / {t['bot_team_saved']})"


def _list(values: list[float], fmt: Callable[[float], str]) -> str:
    return " / ".join(fmt(v) for v in values)


ROWS: tuple[tuple[str, Callable[[Figures, Figures | None], str]], ...] = (
    (
        "Questions that got some answer",
        lambda t, b: f"{t['answered']} of {t['questions']} ({_pc(t['answered_share'])})",
    ),
    (
        "**Questions that got a generated answer**",
        lambda t, b: f"**{t['generated']} ({_pc(t['generated_share'])})**",
    ),
    ("… ratio to the baseline", lambda t, b: _ratio(t, b)),
    ("… by kind: generated / asked", lambda t, b: _kinds(t)),
    (
        "**Questions that got a generated or team answer**",
        lambda t, b: f"**{t['generated_or_team']} ({_pc(t['generated_or_team_share'])})**",
    ),
    (
        "… team answers given (the bot's report: used / generated answers saved)",
        lambda t, b: _team_given(t),
    ),
    (
        "People who got a generated or team answer at least once",
        lambda t, b: (
            f"{t['people_served']} of {t['people']} ({_pc(t['people_served'] / t['people'])})"
        ),
    ),
    (
        "answer_query calls made (admitted + refused)",
        lambda t, b: f"{t['answer_query_calls']} ({t['answer_query_admitted']} + {t['refused']})",
    ),
    (
        "**answer_query calls saved** (the bot's `team:saved`: team answers given when no "
        "generated answer was cached)",
        lambda t, b: f"**{t['bot_team_saved']}**" if t["team_saved_questions"] else "–",
    ),
    (
        "… answer_query calls spent on the saved questions' topics (admitted)",
        lambda t, b: str(t["calls_on_saved_topics"]),
    ),
    (
        "Refused calls (429): per-minute / day",
        lambda t, b: f"{t['refused_minute']} / {t['refused_day']}",
    ),
    (
        "… most refused within one minute window",
        lambda t, b: str(t["most_refused_one_minute_window"]),
    ),
    (
        "… per-minute refusals by minute of the run",
        lambda t, b: str(t["refused_by_run_minute"] or "none"),
    ),
    (
        "… in Google's forms (http / jsonrpc / result)",
        lambda t, b: str(t["refusal_forms"] or "none"),
    ),
    (
        "Answers per admitted answer_query call (reuse factor)",
        lambda t, b: _num(t["reuse_factor"], 2),
    ),
    (
        "Generated answers: own call / exact repeat / normalised paraphrase / shared in flight / reworded",
        lambda t, b: _reuse(t),
    ),
    ('Bot\'s `gdocs_cache_total{cache="answer"}` (all replicas)', lambda t, b: _cache(t)),
    (
        "Search answers that replaced a generated one (`gdocs_quota_fallbacks_total`)",
        lambda t, b: f"{t['metrics_fallbacks']:.0f}",
    ),
    ("**Double answers** (a question answered twice)", lambda t, b: f"**{t['duplicates']}**"),
    (
        "… Slack retries sent / deliveries the bot dropped as repeats",
        lambda t, b: f"{t['retries_sent']} / {t['metrics_duplicates']:.0f}",
    ),
    ("Answers about another topic (a wrong merge)", lambda t, b: str(t["wrong_topic"])),
    (
        "Follow-ups that reached the server with their thread's question",
        lambda t, b: "{} of {}".format(*t["followups_with_context"]),
    ),
    ("Notices without an answer (waits, errors)", lambda t, b: str(t["notices"])),
    (
        "Overhead p50 / p99: question → posted − upstream time",
        lambda t, b: f"{_num(t['overhead_p50_ms'])} / {_num(t['overhead_p99_ms'])} ms",
    ),
    (
        "… p99 of the questions that did not wait for a quota slot",
        lambda t, b: f"{_num(t['overhead_unwaited_p99_ms'])} ms",
    ),
    ("… by outcome (not waiting): count, p50 / p99 ms", lambda t, b: _classes(t)),
    (
        "Questions that waited for a quota slot: count, wait p50 / max",
        lambda t, b: f"{t['waited']}, {_num(t['wait_p50_s'])} / {_num(t['wait_max_s'])} s",
    ),
    (
        "Ack p50 / p99 / max (at the balancer, retries included)",
        lambda t, b: (
            f"{_num(t['ack_p50_ms'])} / {_num(t['ack_p99_ms'])} / {_num(t['ack_max_ms'])} ms"
        ),
    ),
    ("Questions per replica", lambda t, b: _list(t["per_replica_questions"], lambda v: f"{v:.0f}")),
    (
        "Bot CPU per question, per replica: all / less idle CPU",
        lambda t, b: (
            _list(t["cpu_ms_per_question"], lambda v: f"{v:.1f}")
            + " ms; "
            + _list(t["cpu_ms_per_question_net"], lambda v: f"{v:.1f}")
            + " ms"
        ),
    ),
    (
        "… idle CPU per replica (timers, probes), ms per second",
        lambda t, b: _list(t["idle_cpu_ms_per_s"], lambda v: f"{v:.1f}"),
    ),
    ("Peak RSS per replica", lambda t, b: _list(t["rss_mb"], lambda v: f"{v:.0f} MB")),
    (
        "Search bucket (answer_query + search_documents) peak per minute, of 100",
        lambda t, b: str(t["peak_search_bucket"]),
    ),
)


def day_verdicts(f: Figures) -> list[tuple[str, bool]]:
    tops, base = f["topologies"], f["topologies"].get("baseline")
    out: list[tuple[str, bool]] = []
    for t in tops.values():
        if t["name"] == "baseline":
            continue
        label = t["title"]
        # with team answers saved, what the people got is a generated or a team answer
        share, what = (
            ("generated_or_team_share", "generated-or-team-answer share")
            if t["team_saved_questions"]
            else ("generated_share", "generated-answer share")
        )
        double = base is not None and t[share] >= 2 * base["generated_share"]
        out += [
            (f"{label}: {what} ≥ 2 × the baseline's", double),
            (f"{label}: 100 % of questions answered by something", t["answered"] == t["questions"]),
            (
                f"{label}: ≤ 1 refused call per quota window (any minute; the day)",
                t["most_refused_one_minute_window"] <= 1 and t["refused_day"] <= 1,
            ),
            (f"{label}: 0 double answers", t["duplicates"] == 0),
            (f"{label}: 0 answers about another topic", t["wrong_topic"] == 0),
            (f"{label}: overhead p50 < 15 ms", t["overhead_p50_ms"] < 15),
            (f"{label}: ack p99 < 50 ms", t["ack_p99_ms"] < 50),
        ]
        if t["team_saved_questions"]:
            out.append(
                (
                    f"{label}: each team answer Slack got is one the bot counted as used",
                    t["team"] == t["bot_team_used"],
                )
            )
    if base is not None:
        out.append(
            (
                "baseline: 100 % of questions answered by something",
                base["answered"] == base["questions"],
            )
        )
    return out


def _team_setup(tops: list[Figures]) -> list[str]:
    """What a set-up with team answers saved, and how."""
    out = []
    for t in tops:
        if t["team_saved_questions"]:
            saved = "; ".join(f"“{q}”" for q in t["team_saved_questions"])
            out += [
                f"*{t['title']}*: the Redis set-up, where before the day the team saved its "
                f"{len(t['team_saved_questions'])} most asked questions ({saved}: "
                f"{t['team_topic_askings']} askings of those topics in the day) as workspace team "
                "answers, written with `bot.team.TeamAnswers` into the store its replicas share "
                "(what the `save_team_answer` shortcut saves, without its modal). Each is found "
                "by the question key: its words and their form-only paraphrases, not the "
                "rewordings (no “also answers” phrasings saved), nor a follow-up. *answer_query "
                "calls saved* is the bot's own `team:saved`: team answers given when no "
                "generated answer to the question was cached; beside it, what each set-up spent on "
                "those topics, measured at its fake server.",
                "",
            ]
    return out


def render_day(f: Figures, *, command: str, machine: str) -> str:
    s = f["stream"]
    tops = list(f["topologies"].values())
    base = f["topologies"].get("baseline")
    lines = [
        "## A team's day: how far 50 generated answers go",
        "",
        f"Run {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC with `{command.strip()}` on "
        f"{machine}; {f['wall_s']:.0f} s of wall time for the set-ups side by side.",
        "",
        f"The same stream (seed {f['seed']}) through each set-up at once: {s['questions']} questions "
        f"from {s['askers']} askers on {s['topics']} topics over {s['seconds']:.0f} s (the "
        f"compressed day), the most popular topic asked {s['top_topic_askings']} times; kinds "
        f"{s['kinds']}; wordings {s['forms']} (*exact*: words asked before; *form*: a paraphrase "
        f'in case, punctuation, "how do I"/"how to", articles, "please" or plurals, which '
        f"the question key should merge; *reworded*: other words, which it should not); "
        f"{s['surfaces']}; Slack retries {s['retries']} (*race*: at once, *late*: 1 s later, both "
        f"to the other replica); bursts {s['bursts']} (the stand-up: one question each, "
        f"within 45 s; the incident: everyone asks why Cloud Run returns 503s).",
        "",
        f"Each set-up has its own fake Developer Knowledge server enforcing answer_query's "
        f"quota for real: {f['per_minute']} per rolling minute (real minutes) and "
        f"{f['per_day']} for the whole run (the day), refusing in Google's three 429 forms in "
        f"turn. Upstream latency: answer_query {f['answer_latency']:g} s, search "
        f"{f['search_latency']:g} s. The planning bot runs with ANSWER_QUOTA_PER_MINUTE="
        f"{f['per_minute']}, ANSWER_QUOTA_PER_DAY={f['per_day']}, "
        f"ANSWER_QUOTA_PER_USER_PER_DAY={f['per_user']}, everything else default; the baseline "
        "with CACHE_ANSWER_TTL_SECONDS=0, CACHE_SEARCH_TTL_SECONDS=0, ANSWER_QUOTA_PER_MINUTE=0, "
        "ANSWER_QUOTA_PER_DAY=0, ANSWER_QUOTA_PER_USER_PER_DAY=0, ANSWER_QUOTA_WAIT_SECONDS=0, "
        "ANSWER_QUOTA_SKIP_UNTIL_RESET=false, STATE_URL=memory://.",
        "",
        *_team_setup(tops),
    ]
    for name, reason in f["skipped"].items():
        lines += [f"**Left out: {name}** — {reason}.", ""]
    lines += [
        "| measure | " + " | ".join(t["title"] for t in tops) + " |",
        "|---|" + "---|" * len(tops),
        *(f"| {label} | " + " | ".join(cell(t, base) for t in tops) + " |" for label, cell in ROWS),
        "",
        "### Targets",
        "",
        "| target | met |",
        "|---|---|",
        *(f"| {name} | {'yes' if ok else '**no**'} |" for name, ok in day_verdicts(f)),
        "",
    ]
    return "\n".join(lines)
