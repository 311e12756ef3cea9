"""Turn benchmark figures into bench/RESULTS.md."""

from __future__ import annotations

import datetime as dt
from typing import Any


def verdicts(r: dict[str, Any]) -> list[tuple[str, bool]]:
    """Each target of the benchmark issue, met or not (warm pools unless said otherwise)."""
    n = r["n"]
    acks_ok = r["acked_ok"] == n and r["sustained_acked_ok"] == r["sustained_sent"]
    slowest = max(r["burst_ack_max_ms"], r["sustained_ack_max_ms"])
    return [
        ("ack p99 < 50 ms while N questions are in flight", r["sustained_ack_p99_ms"] < 50),
        ("every command acknowledged, none near 3 s", acks_ok and slowest < 1000),
        ("overhead p50 < 15 ms while N are in flight", r["sustained_overhead_p50_ms"] < 15),
        ("overhead p99 < 100 ms while N are in flight", r["sustained_overhead_p99_ms"] < 100),
        (
            "N distinct questions at once within 1.5 × upstream time",
            r["wall_s"] <= 1.5 * r["upstream_per_question_s"],
        ),
        (
            "cap < N: all answered, queueing (≤ 1.5 × ideal waves)",
            r["capped_answered"] == n and r["capped_wall_s"] <= 1.5 * r["capped_ideal_s"],
        ),
        ("N identical questions → 1 upstream call", r["identical_upstream_calls"] == 1),
        ("cache hit answered < 20 ms end to end", r["cache_hit_p50_ms"] < 20),
        ("peak RSS < 150 MB", r["peak_rss_mb"] < 150),
        ("cold start < 2 s", r["cold_start_s"] < 2),
    ]


def _ms(a: float, b: float) -> str:
    return f"{a:.1f} / {b:.1f} ms"


def _segments(seg: dict[str, float]) -> str:
    return f"{seg['before_ms']:.1f} / {seg['between_ms']:.1f} / {seg['after_ms']:.1f} ms"


def _calls(pair: tuple[float, float]) -> str:
    return f"{pair[0]:.1f} ({pair[1]:.1f})"


def _rows(r: dict[str, Any]) -> list[tuple[str, str]]:
    """(measure, this store's figure) for every row of the table; a heading's figure is ""."""
    n, cold = r["n"], r["cold"]
    sustained = (
        f"{r['sustained_sent']} questions at {r['sustained_rate']:.0f}/s "
        f"(N per upstream time) for {r['sustained_sent'] / r['sustained_rate']:.1f} s"
    )
    return [
        (f"**Steady load**: {sustained}", ""),
        (
            "Questions in flight at the upstream (p50, steady state)",
            f"{r['sustained_in_flight_p50']:.0f}",
        ),
        (
            "Acknowledged (HTTP 200) / answered",
            f"{r['sustained_acked_ok']} / {r['sustained_answered']} of {r['sustained_sent']}",
        ),
        (
            "Ack p50 / p99 while N are in flight (questions sent then)",
            f"{_ms(r['sustained_ack_p50_ms'], r['sustained_ack_p99_ms'])}"
            f" ({r['sustained_steady']})",
        ),
        (
            "E2E overhead p50 / p99 while N are in flight (e2e − upstream)",
            _ms(r["sustained_overhead_p50_ms"], r["sustained_overhead_p99_ms"]),
        ),
        (
            "… of which p50: request → upstream call / between the calls / → posted",
            _segments(r["sustained_segments"]),
        ),
        *(
            (
                f"{label}: ack p50 / p99; overhead p50 / p99",
                f"{_ms(a50, a99)}; {_ms(o50, o99)}",
            )
            for label, (a50, a99, o50, o99) in (
                ("… `/gdocs` commands", r["sustained_by_kind"]["command"]),
                (
                    "… @mentions (Events API, answered in a thread)",
                    r["sustained_by_kind"]["mention"],
                ),
            )
        ),
        (
            "Bot CPU per question / share of one core; driver + fakes' share",
            f"{r['sustained_bot_cpu_ms_per_question']:.2f} ms / "
            f"{r['sustained_bot_cpu_share']:.0%}; {r['sustained_driver_cpu_share']:.0%}",
        ),
        (
            "Store calls per question under steady load (of them writes)",
            _calls(r["sustained_calls"]),
        ),
        (f"**{n} distinct questions at once**: one burst, one channel each", ""),
        ("Acknowledged (HTTP 200) / answered", f"{r['acked_ok']} / {r['answered']} of {n}"),
        (
            "Ack p50 / p99 / max within the burst",
            f"{r['burst_ack_p50_ms']:.1f} / {r['burst_ack_p99_ms']:.1f} / "
            f"{r['burst_ack_max_ms']:.1f} ms",
        ),
        (
            "Upstream time per question (answer_query + titles)",
            f"{r['upstream_per_question_s']:.3f} s",
        ),
        (
            "Wall time, first command → last answer",
            f"{r['wall_s']:.3f} s = {r['wall_over_upstream']:.2f} × upstream time "
            f"(cold pools: {cold['wall_s']:.3f} s)",
        ),
        (
            "E2E overhead p50 / p99 (e2e − upstream)",
            f"{_ms(r['overhead_p50_ms'], r['overhead_p99_ms'])} "
            f"(cold pools: {_ms(cold['overhead_p50_ms'], cold['overhead_p99_ms'])})",
        ),
        (
            "… of which p50: request → upstream call / between the calls / → posted",
            _segments(r["segments"]),
        ),
        ("Upstream calls in flight at most", str(r["max_in_flight"])),
        (
            "Bot CPU per question",
            f"{r['bot_cpu_ms_per_question']:.2f} ms "
            f"(cold pools: {cold['bot_cpu_ms_per_question']:.2f} ms)",
        ),
        ("Store calls per question in the burst (of them writes)", _calls(r["burst_calls"])),
        ("**Other**", ""),
        (
            f"Cap {r['capped_cap']} < N: answered / wall / ideal waves / max in flight",
            f"{r['capped_answered']} of {n} / {r['capped_wall_s']:.2f} s / "
            f"{r['capped_ideal_s']:.2f} s / {r['capped_max_in_flight']}",
        ),
        (f"{n} identical questions: answer_query calls", str(r["identical_upstream_calls"])),
        (
            "Cache hit, command → posted answer p50 / max",
            f"{_ms(r['cache_hit_p50_ms'], r['cache_hit_max_ms'])} "
            f"({r['cache_hit_upstream_calls']} upstream calls)",
        ),
        ("Store calls per cache hit (of them writes)", _calls(r["hit_calls"])),
        (
            "Store calls timed out or failed (then served by per-process state)",
            str(r["store_errors"]),
        ),
        ("RSS at idle after the first answer", f"{r['idle_rss_mb']} MB"),
        (f"Peak RSS by the end of the bursts ({n} held at once)", f"{r['burst_rss_mb']} MB"),
        ("Peak RSS of the bot process", f"{r['peak_rss_mb']} MB"),
        ("Cold start (spawn → /healthz 200)", f"{r['cold_start_s']:.2f} s"),
        (
            "CLI `gdocs-bot ask`: wall p50 / overhead p50 / peak RSS",
            f"{r['cli_wall_p50_s']:.2f} s / {r['cli_overhead_p50_ms']:.0f} ms / "
            f"{r['cli_peak_rss_mb']} MB",
        ),
    ]


def _table(head: str, columns: list[list[tuple[str, str]]], names: list[str]) -> list[str]:
    """One row per measure, one column per store (the measures are the same in each)."""
    lines = [f"| {head} | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for i, (label, _) in enumerate(columns[0]):
        cells = [col[i][1] for col in columns]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return lines


def render_report(
    runs: list[dict[str, Any]], reason: str | None, *, argv: list[str], machine: str
) -> str:
    """The load section: each store (its run's "store") a column of figures and of targets."""
    r = runs[0]
    n, lat = r["n"], r["latency"]
    cmd = "python -m bench.run" + ("" if not argv else " " + " ".join(argv))
    names = [run["store"] for run in runs]
    judged = [[(name, "yes" if ok else "**no**") for name, ok in verdicts(run)] for run in runs]
    lines = [
        "## The bot's own cost under load (`--scenario load`, the default)",
        "",
        f"Run {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC with `{cmd}` on {machine}.",
        f"N = {n} concurrent questions; upstream latency {lat:g} s for answer_query/search, "
        f"{r['doc_latency']:g} s for get_documents (titles). Everything on 127.0.0.1: the real bot "
        "process (`python -m bot serve`, HTTP mode), a fake Slack Web API and a fake Developer "
        "Knowledge MCP server (bench/fakes.py, in the driver's process), driven by signed slash "
        "commands (and, under steady load, every other question as a signed @mention event), "
        "one channel each. Figures are for warm connection pools unless marked cold. "
        "*Steady load* keeps N questions in flight: they arrive at N per upstream time, as "
        "N concurrent users would (Little's law), and the figures are for the commands sent "
        "once the N were in flight. *At once* sends all N in the same instant. "
        f"The same load runs once per store ({', '.join(names)}), one after another, each "
        "from a clean state (a new SQLite file, a flushed redis-server on 127.0.0.1); store "
        "calls are the bot's own count (gdocs_store_calls_total on /metrics: a batch is one "
        "call, one SQLite transaction or one Redis round trip).",
        "",
    ]
    if reason:
        lines += [f"**Left out: Redis** — {reason}.", ""]
    lines += [
        *_table("measure", [_rows(run) for run in runs], names),
        "",
        "### Targets",
        "",
        *_table("target", judged, names),
        "",
    ]
    return "\n".join(lines)
