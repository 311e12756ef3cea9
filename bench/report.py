"""Turn benchmark figures into bench/RESULTS.md."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

#: hand-written analysis appended to the generated figures
FINDINGS = Path(__file__).with_name("FINDINGS.md")


def verdicts(r: dict[str, Any]) -> list[tuple[str, bool]]:
    """Each target of the benchmark issue, met or not (warm pools unless said otherwise)."""
    n = r["n"]
    return [
        ("ack p99 < 50 ms while N questions are in flight", r["probe_ack_p99_ms"] < 50),
        (
            "every command acknowledged, none near 3 s",
            r["acked_ok"] == n + r["probes"] and r["ack_max_ms"] < 1000,
        ),
        ("overhead p50 < 15 ms (N at once)", r["overhead_p50_ms"] < 15),
        ("overhead p99 < 100 ms (N at once)", r["overhead_p99_ms"] < 100),
        (
            "N distinct questions within 1.5 × upstream latency",
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


def render_report(r: dict[str, Any], *, argv: list[str], machine: str) -> str:
    n, lat, cold = r["n"], r["latency"], r["cold"]
    cmd = "python -m bench.run" + ("" if not argv else " " + " ".join(argv))
    rows = [
        ("Commands acknowledged (HTTP 200)", f"{r['acked_ok']} of {n + r['probes']}"),
        ("Answers posted", f"{r['answered']} of {n + r['probes']}"),
        (
            f"Ack p50 / p99 of {r['probes']} commands sent while N are in flight",
            _ms(r["probe_ack_p50_ms"], r["probe_ack_p99_ms"]),
        ),
        (
            f"Ack p50 / p99 within the burst of {n} (all sent at once)",
            _ms(r["burst_ack_p50_ms"], r["burst_ack_p99_ms"]),
        ),
        ("Slowest ack of all", f"{r['ack_max_ms']:.1f} ms"),
        (
            "Upstream time per question (answer_query + titles)",
            f"{r['upstream_per_question_s']:.3f} s",
        ),
        (
            "E2E overhead p50 / p99, N at once (e2e − upstream)",
            _ms(r["overhead_p50_ms"], r["overhead_p99_ms"]),
        ),
        (
            "E2E overhead p50 / p99, same with cold connection pools",
            _ms(cold["overhead_p50_ms"], cold["overhead_p99_ms"]),
        ),
        (
            "E2E overhead p50 / p99 of the commands sent while N are in flight",
            _ms(r["probe_overhead_p50_ms"], r["probe_overhead_p99_ms"]),
        ),
        (
            f"Wall time, {n} distinct questions at once",
            f"{r['wall_s']:.3f} s = {r['wall_over_latency']:.2f} × upstream latency (cold pools: {cold['wall_s']:.3f} s)",
        ),
        ("Upstream calls in flight at most (cap ≥ N)", str(r["max_in_flight"])),
        (
            "Bot CPU per question",
            f"{r['bot_cpu_ms_per_question']:.2f} ms (cold pools: {cold['bot_cpu_ms_per_question']:.2f} ms)",
        ),
        (
            f"Cap {r['capped_cap']} < N: answered / wall / ideal waves / max in flight",
            f"{r['capped_answered']} of {n} / {r['capped_wall_s']:.2f} s / {r['capped_ideal_s']:.2f} s / {r['capped_max_in_flight']}",
        ),
        (f"{n} identical questions: answer_query calls", str(r["identical_upstream_calls"])),
        (
            "Cache hit, command → posted answer p50 / max",
            f"{_ms(r['cache_hit_p50_ms'], r['cache_hit_max_ms'])} ({r['cache_hit_upstream_calls']} upstream calls)",
        ),
        ("Peak RSS of the bot process", f"{r['peak_rss_mb']} MB"),
        ("Cold start (spawn → /healthz 200)", f"{r['cold_start_s']:.2f} s"),
        (
            "CLI `gdocs-bot ask`: wall p50 / overhead p50 / peak RSS",
            f"{r['cli_wall_p50_s']:.2f} s / {r['cli_overhead_p50_ms']:.0f} ms / {r['cli_peak_rss_mb']} MB",
        ),
    ]
    lines = [
        "# Benchmark results",
        "",
        f"Run {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC with `{cmd}` on {machine}.",
        f"N = {n} concurrent questions; upstream latency {lat:g} s for answer_query/search, "
        f"{r['doc_latency']:g} s for get_documents (titles). Everything on 127.0.0.1: the real bot "
        "process (`python -m bot serve`, HTTP mode), a fake Slack Web API and a fake Developer "
        "Knowledge MCP server (bench/fakes.py, in the driver's process), driven by signed slash "
        "commands, one channel each. Figures are for warm connection pools unless marked cold.",
        "",
        "| measure | result |",
        "|---|---|",
        *(f"| {a} | {b} |" for a, b in rows),
        "",
        "## Targets",
        "",
        "| target | met |",
        "|---|---|",
        *(f"| {name} | {'yes' if ok else '**no**'} |" for name, ok in verdicts(r)),
        "",
    ]
    if FINDINGS.exists():
        lines += [FINDINGS.read_text().rstrip(), ""]
    return "\n".join(lines)
