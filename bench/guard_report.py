"""The guard's section of bench/RESULTS.md: its tables and its targets."""

from __future__ import annotations

import argparse
import datetime as dt
import math
from collections.abc import Callable
from typing import Any

from bench.driver import machine, median

#: the burst's figures, their names and digits, and the most the bot may be of the naive's
BURST = {
    "cpu_ms": ("CPU per question, ms", 2, 1.5),
    "rss_mb": ("Peak RSS, MB", 0, 1.3),
    "cold_start_s": ("Cold start (spawn → /healthz 200), s", 2, 1.2),
}
ACK_P99_MS = 250.0
Row = tuple[str, list[str]]


def _f(x: float, digits: int = 1) -> str:
    return "–" if math.isnan(x) else f"{x:.{digits}f}"


def _x(a: float, b: float) -> str:
    return f"{a / b:.2f} ×" if b else "–"


def table(columns: list[str], rows: list[Row]) -> list[str]:
    out = ["| measure | " + " | ".join(columns) + " |", "|---|" + "---|" * len(columns)]
    return out + [f"| {name} | " + " | ".join(cells) + " |" for name, cells in rows]


def samples(result: dict[str, Any], bot: str, key: str) -> list[float]:
    """The burst's figure `key` of `bot`, one a round; cold starts from every start."""
    if key == "cold_start_s" and "cold" in result:
        return list(result["cold"][bot])
    return [r[key] for r in result["burst"][bot]]


def burst_table(result: dict[str, Any], labels: dict[str, str]) -> list[str]:
    runs = result["burst"]
    keys = (*BURST, "slack_calls", "mcp_calls")
    med = {v: {k: median(samples(result, v, k)) for k in keys} for v in runs}
    ratios = [("after", "job"), ("after", "naive"), ("before", "job"), ("after", "before")]
    ratios = [(a, b) for a, b in ratios if a in runs and b in runs]
    columns = [labels[v] for v in runs] + [f"{a} ÷ {b}" for a, b in ratios]
    rows: list[Row] = []
    for key, (name, digits, limit) in BURST.items():
        cells = []
        for v in runs:
            each = samples(result, v, key)
            spread = " / ".join(_f(x, digits) for x in each)
            if len(each) > 3:
                spread = f"{_f(min(each), digits)}–{_f(max(each), digits)}, {len(each)} starts"
            cells.append(f"{_f(med[v][key], digits)} ({spread})")
        ratio_cells = [_x(med[a][key], med[b][key]) for a, b in ratios]
        unit = "start" if key == "cold_start_s" else "round"
        label = f"{name}: median (each {unit}); target ≤ {limit} × a naive bot"
        rows.append((label, cells + ratio_cells))
    blank = [""] * len(ratios)
    calls = [f"{med[v]['slack_calls']:.1f} / {med[v]['mcp_calls']:.1f}" for v in runs]
    rows.append(("Calls a question to Slack / MCP tools", calls + blank))
    once = [
        f"{sum(r['once'] for r in runs[v])} of {sum(r['asked'] for r in runs[v])}" for v in runs
    ]
    rows.append(("Answered exactly once", once + blank))
    return table(columns, rows)


STEADY: tuple[tuple[str, Callable[[dict[str, Any]], str]], ...] = (
    ("Questions (new + repeats)", lambda r: f"{r['asked']} ({r['new']} + {r['repeats']})"),
    ("**Answered exactly once**", lambda r: f"**{r['once']}**"),
    ("… not answered / answered more than once", lambda r: f"{r['none']} / {r['more']}"),
    (
        "**Ack p99** (p50 / max)",
        lambda r: f"**{_f(r['ack_p99_ms'])} ms** ({_f(r['ack_p50_ms'])} / {_f(r['ack_max_ms'])})",
    ),
    ("Acks not HTTP 200", lambda r: str(r["not_200"])),
    (
        "Question → answer p50: new / repeat",
        lambda r: f"{_f(r['new_p50_ms'], 0)} / {_f(r['repeat_p50_ms'], 0)} ms",
    ),
    ("answer_query calls (new questions)", lambda r: f"{r['answer_calls']} ({r['new']})"),
    ("CPU per question", lambda r: f"{_f(r['cpu_ms'], 2)} ms"),
    ("Peak RSS", lambda r: f"{_f(r['rss_mb'], 0)} MB"),
    ("Cold start", lambda r: f"{_f(r['cold_start_s'], 2)} s"),
)
DAY: tuple[tuple[str, Callable[[dict[str, Any]], str]], ...] = (
    (
        "**Generated answers**",
        lambda t: f"**{t['generated']} of {t['questions']} ({100 * t['generated_share']:.0f} %)**",
    ),
    ("Answered by something", lambda t: f"{t['answered']} of {t['questions']}"),
    ("Double answers / wrong topic", lambda t: f"{t['duplicates']} / {t['wrong_topic']}"),
    ("Refused answer_query calls", lambda t: str(t["refused"])),
    ("Ack p99", lambda t: f"{_f(t['ack_p99_ms'])} ms"),
    ("CPU per question (all replicas)", lambda t: f"{_f(t['cpu_ms_per_question_all'])} ms"),
    ("Peak RSS per replica", lambda t: " / ".join(f"{m:.0f}" for m in t["rss_mb"]) + " MB"),
)


def verdicts(result: dict[str, Any]) -> list[tuple[str, bool]]:
    out = []
    for naive, whose in (("job", "same-job naive bot's"), ("naive", "half-job naive bot's")):
        if {"after", naive} <= set(result.get("burst", {})):
            for key, (name, _, limit) in BURST.items():
                after, base = (median(samples(result, v, key)) for v in ("after", naive))
                ratio = round(after / base, 2)
                out.append(
                    (f"burst: {name} ≤ {limit} × the {whose} ({ratio:.2f} ×)", ratio <= limit)
                )
    for name, r in result.get("steady", {}).items():
        out.append(
            (f"steady, {name}: every question answered exactly once", r["once"] == r["asked"])
        )
        out.append(
            (f"steady, {name}: ack p99 ≤ {ACK_P99_MS:.0f} ms", r["ack_p99_ms"] <= ACK_P99_MS)
        )
    tops = result.get("day", {}).get("topologies", {}).values()
    # one set-up's share moves by a few questions with timing: each tree's set-ups pooled
    after = [t["generated"] for t in tops if t["name"] in ("sqlite", "redis")]
    before = [t["generated"] for t in tops if t["name"].endswith("-before")]
    if after and before:
        ok = sum(after) / len(after) >= sum(before) / len(before)
        out.append(
            (
                f"day: generated answers per set-up, {sum(after) / len(after):.1f} (after) not below {sum(before) / len(before):.1f} (before)",
                ok,
            )
        )
    return out


def render(result: dict[str, Any], args: argparse.Namespace, command_line: str) -> str:
    labels = {
        "after": f"after: {args.after_label}",
        "before": f"before: {args.before_label}",
        "naive": "naive bot, half the job (naive_bot.py)",
        "job": "naive bot, the same job (naive_full.py)",
    }
    lines = [
        f"### Run {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC",
        "",
        f"`{command_line}` on {machine()}; {result['wall_s']:.0f} s in all.",
        "",
    ]
    if "burst" in result:
        lines += [
            f"**Burst**: {args.burst} distinct `/gdocs` questions at once, answer_query {args.latency:g} s, "
            f"get_documents {args.doc_latency:g} s; {args.rounds} round(s), the processes taking turns; "
            f"the bots on the default SQLite store. Cold starts: the bursts' and {args.starts} more "
            "each, taking turns.",
            "",
            *burst_table(result, labels),
            "",
        ]
    if "steady" in result:
        lines += [
            f"**Steady load**: {args.rate:g} questions a second for {args.seconds:g} s, every other one a "
            f"repeat of a question asked ≥ {args.repeat_after:g} s before, one in four a mention; "
            f"answer_query {args.latency:g} s.",
            "",
            *table(
                list(result["steady"]),
                [(n, [cell(r) for r in result["steady"].values()]) for n, cell in STEADY],
            ),
            "",
        ]
    if "day" in result:
        tops = list(result["day"]["topologies"].values())
        lines += [
            f"**The team's day** ({result['day']['stream']['questions']} questions; 10 answer_query a "
            "minute and 50 a day at each set-up's fake server; the full table is the day section):",
            "",
            *table([t["title"] for t in tops], [(n, [cell(t) for t in tops]) for n, cell in DAY]),
            "",
        ]
    lines += ["| target | met |", "|---|---|"]
    lines += [f"| {name} | {'yes' if ok else '**no**'} |" for name, ok in verdicts(result)]
    return "\n".join(lines) + "\n"
