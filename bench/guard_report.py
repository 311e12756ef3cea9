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


def burst_table(runs: dict[str, list[dict[str, Any]]], labels: dict[str, str]) -> list[str]:
    med = {
        v: {k: median([r[k] for r in rs]) for k in (*BURST, "slack_calls", "mcp_calls")}
        for v, rs in runs.items()
    }
    bots = list(runs)
    ratios = [("after", "naive"), ("before", "naive"), ("after", "before")]
    ratios = [(a, b) for a, b in ratios if a in runs and b in runs]
    columns = (
        [labels[v] for v in bots] + [f"{a} ÷ {b}" for a, b in ratios] + ["target (after ÷ naive)"]
    )
    rows: list[Row] = []
    for key, (name, digits, limit) in BURST.items():
        cells = [
            f"{_f(med[v][key], digits)} ({' / '.join(_f(r[key], digits) for r in runs[v])})"
            for v in bots
        ]
        rows.append(
            (
                f"{name}: median (each round)",
                cells + [_x(med[a][key], med[b][key]) for a, b in ratios] + [f"≤ {limit} ×"],
            )
        )
    blank = [""] * (len(ratios) + 1)
    rows.append(
        (
            "Calls a question to Slack / MCP tools",
            [f"{med[v]['slack_calls']:.1f} / {med[v]['mcp_calls']:.1f}" for v in bots] + blank,
        )
    )
    rows.append(
        (
            "Answered exactly once",
            [
                f"{sum(r['once'] for r in runs[v])} of {sum(r['asked'] for r in runs[v])}"
                for v in bots
            ]
            + blank,
        )
    )
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
    bursts = result.get("burst", {})
    for key, (name, _, limit) in BURST.items() if {"after", "naive"} <= set(bursts) else ():
        after, naive = (median([r[key] for r in bursts[v]]) for v in ("after", "naive"))
        ratio = round(after / naive, 2)
        out.append((f"burst: {name} ≤ {limit} × the naive bot's ({ratio:.2f} ×)", ratio <= limit))
    for name, r in result.get("steady", {}).items():
        out.append(
            (f"steady, {name}: every question answered exactly once", r["once"] == r["asked"])
        )
        out.append(
            (f"steady, {name}: ack p99 ≤ {ACK_P99_MS:.0f} ms", r["ack_p99_ms"] <= ACK_P99_MS)
        )
    tops = result.get("day", {}).get("topologies", {})
    for store in ("sqlite", "redis"):
        now, then = tops.get(store), tops.get(f"{store}-before")
        if now and then:
            ok = now["generated_share"] >= then["generated_share"]
            out.append(
                (f"day, {store}: the share of generated answers not below the older tree's", ok)
            )
    return out


def render(result: dict[str, Any], args: argparse.Namespace, command_line: str) -> str:
    labels = {
        "after": f"after: {args.after_label}",
        "before": f"before: {args.before_label}",
        "naive": "naive bot",
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
            "the bots on the default SQLite store.",
            "",
            *burst_table(result["burst"], labels),
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
