"""`python -m bench.run --scenario render`: what rendering costs per kB, typical and worst.

In process (rendering is pure): a typical documentation page (bench/render_corpus.py) and
every pathological input of the render tests' corpus, each through `markdown_to_blocks` (one
conversion), `document_page_spans` (cutting a document into pages, which renders each page
to measure it) and `render_answer`; throughput in MB/s, best of `--render-repeats`.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

from bench.render_corpus import corpus, typical_page
from bench.results_file import update_results
from bot.models import Answer, Document
from bot.render import document_page_spans, markdown_to_blocks, render_answer

URI = "https://docs.cloud.google.com/storage/docs/creating-buckets"
NAME = "documents/docs.cloud.google.com/storage/docs/creating-buckets"


def _best(work: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return min(times)


def _row(name: str, text: str, repeats: int) -> dict[str, Any]:
    doc = Document(name=NAME, uri=URI, title="Bench", content=text)
    answer = Answer(kind="answer", query="q", text=text)
    mb = len(text.encode()) / 1e6
    convert = _best(lambda: markdown_to_blocks(text, base_url=URI), repeats)
    pages = _best(lambda: document_page_spans(doc), repeats)
    shown = _best(lambda: render_answer(answer), repeats)
    return {
        "case": name,
        "kb": len(text.encode()) / 1000,
        "convert_mbs": mb / convert,
        "pages_mbs": mb / pages,
        "answer_ms": shown * 1000,
        "ms_per_100kb": convert * 1000 * 0.1 / mb,
    }


def measure(args: argparse.Namespace) -> dict[str, Any]:
    repeats = args.render_repeats
    cases = {"typical page": typical_page(10 if args.smoke else 60)}
    pathological = corpus()
    if args.smoke:
        pathological = {k: v[:5000] for k, v in list(pathological.items())[:4]}
    cases |= pathological
    rows = [_row(name, text, repeats) for name, text in cases.items()]
    return {"rows": rows}


def render_report(results: dict[str, Any], argv: list[str], machine: str) -> str:
    rows = results["rows"]
    typical, worst = rows[0], min(rows[1:], key=lambda r: r["convert_mbs"])
    median = statistics.median(r["convert_mbs"] for r in rows[1:])
    lines = [
        "## What rendering costs (`--scenario render`)",
        "",
        f"`python -m bench.run {' '.join(argv)}` on {machine}. In process, best of "
        f"{results.get('repeats', '?')}; MB/s of Markdown source. *convert*: "
        "`markdown_to_blocks` (one conversion); *pages*: `document_page_spans` (cutting a "
        "document, which renders every page to measure it); *answer*: `render_answer` (an "
        "answer is cut to 34,500 characters before conversion). The VM is shared (load ~3 on "
        "2 cores): absolute MB/s vary up to 2 × between runs; the ratios within one run are "
        "the figures to compare.",
        "",
        f"- **Typical page: {typical['convert_mbs']:.2f} MB/s** converted "
        f"({typical['ms_per_100kb']:.0f} ms per 100 kB), {typical['pages_mbs']:.2f} MB/s paged.",
        f"- **Worst pathological case: {worst['convert_mbs']:.2f} MB/s** "
        f"(`{worst['case']}`, {worst['ms_per_100kb']:.0f} ms per 100 kB; the corpus's median "
        f"{median:.2f} MB/s): "
        f"{typical['convert_mbs'] / worst['convert_mbs']:.1f} × slower than typical, and linear.",
        "",
        "| input | kB | convert MB/s | pages MB/s | answer ms |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        lines.append(
            f"| {r['case']} | {r['kb']:,.0f} | {r['convert_mbs']:.2f} | {r['pages_mbs']:.2f} "
            f"| {r['answer_ms']:,.1f} |"
        )
    return "\n".join(lines) + "\n"


def run_render_scenario(args: argparse.Namespace, *, argv: list[str], machine: str) -> int:
    if args.smoke:
        args.render_repeats = 1
    results = measure(args)
    results["repeats"] = args.render_repeats
    report = render_report(results, argv=argv, machine=machine)
    print(report)
    if not args.smoke:
        update_results(args.out, "render", report)
        print(f"wrote {args.out}")
    return 0
