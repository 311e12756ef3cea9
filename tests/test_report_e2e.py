"""`gdocs-bot report` after a seeded day: the bot answers a dozen /gdocs questions over
signed HTTP (fake MCP servers, fake Slack) on a real SQLite file or a real redis-server,
people vote, then the installed console script reads the same STATE_URL. Its counts are
what the fakes saw; md, json and html show the same numbers; nobody's id is in any of them;
the html page opens in headless Chromium (screenshot taken)."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import subprocess
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from bot.quota import pacific_day
from bot.render import FEEDBACK_MODAL_CALLBACK
from tests.fakes.mcp_servers import FakeDeveloperKnowledge, Fault
from tests.slack_harness import SlackBot, running_bot
from tests.test_cli import gdocs
from tests.test_slack_feedback import feedback_values

pytestmark = pytest.mark.timeout(120)

MENTIONED = "UPEOPLE42"
#: (user, channel, text) in the order asked; every asker a different person
DAY: list[tuple[str, str, str]] = [
    ("U1ASK0001", "C1", "how do I create a bucket?"),  # generated (answer_query 1)
    ("U1ASK0002", "C2", "How do I create a Bucket"),  # the same key: reused, normalised
    ("U1ASK0003", "C1", "how do I create a bucket?"),  # reused, exact
    ("U1ASK0004", "C1", f"what does firestore pricing include? cc <@{MENTIONED}>"),  # aq 2
    ("U1ASK0005", "C1", "how do I delete a bucket?"),  # answer_query 3: the day is spent
    ("U1ASK0006", "C1", "how do I list buckets in a project?"),  # search only: quota day
    ("U1ASK0007", "C1", "firestore pricing"),  # a keyword lookup
    ("U1ASK0008", "C2", "search qqqzzzx"),  # a search without a hit
    ("U1ASK0009", "C1", "search firestore"),
    ("U1ASK0009", "C1", "search firestore"),  # reused, exact
    ("U1ASK0009", "C1", "search firestore"),  # over the person's rate limit
    ("U1ASK0010", "C1", "search broken index"),  # the docs service fails
]
USERS = sorted({user for user, _, _ in DAY} | {MENTIONED})
COMMENT = "It needs the list command, not a page"
UNVERIFIED = "kubectl rollout restart deployment/web --force-conflicts"


@dataclass
class Seeded:
    state_url: str
    cwd: Path
    #: what the fakes saw
    asked: int
    generated_posts: int
    search_posts: int
    answer_query_calls: int
    failures: int
    rate_limited: int


def _shown(args: dict[str, Any]) -> str:
    return json.dumps([args.get("text", ""), args.get("blocks", [])], ensure_ascii=False)


async def _ask(bot: SlackBot, dk: FakeDeveloperKnowledge, n: int) -> str:
    """Ask the day's question `n`; the response_url key of its command."""
    user, channel, text = DAY[n - 1]
    if text == "search broken index":  # the call and its one retry fail
        dk.faults.extend(Fault(status=503, tool="search_documents") for _ in range(2))
    sent = await bot.command(text, user=user, channel=channel)
    await bot.finished(n)
    assert sent.key is not None
    return sent.key


def _said_to(bot: SlackBot, keys: list[str], words: str) -> int:
    """How many of the commands behind `keys` got a private reply containing `words`."""
    return sum(any(words in json.dumps(r) for r in bot.fake.responses_to(k)) for k in keys)


async def _seed(bot: SlackBot, dk: FakeDeveloperKnowledge) -> dict[str, Any]:
    # a generated answer with a command no cited page has: the verified-answers check
    # flags it, and the report lists it as a gap
    dk.answers["how do I delete a bucket?"] = (
        f"Here is how: run `{UNVERIFIED}`.",
        ["documents/docs.cloud.google.com/storage/docs/creating-buckets"],
    )
    keys = [await _ask(bot, dk, n) for n in range(1, len(DAY) + 1)]
    posts = bot.fake.calls_to("chat.postMessage")
    first = next(p for p in posts if "create a bucket" in _shown(p.args))
    listing = next(p for p in posts if "list buckets" in _shown(p.args))
    up, _ = feedback_values(first.args)
    _, down = feedback_values(listing.args)
    await bot.feedback_click(up, user="U1ASK0001", message_ts=first.result["ts"])
    await bot.feedback_click(down, user="U1ASK0006", message_ts=listing.result["ts"], text="👎")
    await bot.finished(len(DAY) + 2)
    await bot.view_submission(
        FEEDBACK_MODAL_CALLBACK, down, {"comment": {"comment": COMMENT}}, user="U1ASK0006"
    )
    await bot.finished(len(DAY) + 3)
    return {"posts": posts, "keys": keys}


@pytest.fixture(params=["sqlite", "redis"])
async def seeded(
    request: pytest.FixtureRequest, dk_server: FakeDeveloperKnowledge, tmp_path: Path
) -> AsyncIterator[Seeded]:
    if request.param == "redis":
        state_url = request.getfixturevalue("redis_server").url
    else:
        state_url = f"sqlite:///{tmp_path}/state.db"
    async with running_bot(
        dk_server,
        state_url=state_url,
        answer_quota_per_day=3,
        answer_quota_per_minute=0,
        rate_limit_per_user_per_minute=2,
        # a shared machine's slow write must not send counts to per-process state
        state_timeout_seconds=5,
    ) as bot:
        seen = await _seed(bot, dk_server)
        posts = seen["posts"]
        generated = sum("Here is how" in _shown(p.args) for p in posts)
        keys = seen["keys"]
        yield Seeded(
            state_url=state_url,
            cwd=tmp_path,
            asked=len(DAY),
            generated_posts=generated,
            search_posts=len(posts) - generated,
            answer_query_calls=len(dk_server.tool_calls("answer_query")),
            failures=_said_to(bot, keys, "Google's documentation isn't answering right now"),
            rate_limited=_said_to(bot, keys, "questions in the last minute"),
        )


def _report(seeded: Seeded, *args: str) -> subprocess.CompletedProcess[str]:
    return gdocs(seeded.cwd, "report", *args, STATE_URL=seeded.state_url, ANSWER_QUOTA_PER_DAY="3")


async def _report_async(seeded: Seeded, *args: str) -> subprocess.CompletedProcess[str]:
    return await asyncio.to_thread(_report, seeded, *args)


async def test_the_json_report_counts_what_the_fakes_saw(seeded: Seeded) -> None:
    """Questions, generated and search-only answers (and why), failures, the rate limit,
    answer_query calls and reuse: the report's totals are what Slack and Google saw."""
    result = await _report_async(seeded, "--format", "json")
    assert 0 == result.returncode, result.stderr
    report = json.loads(result.stdout)
    total = report["total"]
    today = pacific_day(datetime.now(UTC))

    assert seeded.asked == total["questions"]
    assert seeded.generated_posts == total["generated"] == 5
    assert seeded.search_posts == total["search_only"] == 5
    assert {"quota_day": 1, "keyword": 4} == {
        why: n for why, n in total["search_only_why"].items() if n
    }
    assert (seeded.failures, seeded.rate_limited) == (total["failed"], total["rate_limited"])
    assert (1, 1) == (seeded.failures, seeded.rate_limited)
    assert {"made": seeded.answer_query_calls, "refused": 0} == total["answer_query"]
    assert 3 == seeded.answer_query_calls
    assert {"exact": 2, "normalised": 1, "shared": 0} == total["reuse"]
    [day] = [d for d in report["days"] if d["questions"]]
    assert today == day["day"]
    assert 7 == len(report["days"])
    assert 3 == report["quota_per_day"]
    assert {"count": 2} == report["channels"]


async def test_topics_gaps_pages_and_votes_come_from_the_answers_and_votes(
    seeded: Seeded,
) -> None:
    """The bucket question is the top topic; the search-only answer with a 👎 and its
    comment is the first gap; the search without a hit and the generated answer whose
    command no cited page has (verified answers) are gaps too; votes by answer kind."""
    report = json.loads((await _report_async(seeded, "--format", "json")).stdout)
    topics = {t["topic"]: (t["asked"], t["generated"]) for t in report["topics"]}
    gaps = report["gaps"]

    assert ("create bucket", 3, 3) == (report["topics"][0]["topic"], *topics["create bucket"])
    assert "list bucket in project" == gaps[0]["topic"]
    assert {"search_only": 1, "thumbs_down": 1} == gaps[0]["reasons"]
    assert [COMMENT] == gaps[0]["comments"]
    by_topic = {g["topic"]: g for g in gaps}
    assert {"no_hit": 1} == by_topic["qqqzzzx"]["reasons"]
    assert {"not_found": 1} == by_topic["delete bucket"]["reasons"]
    assert [UNVERIFIED] == by_topic["delete bucket"]["flagged_commands"]
    assert "search qqqzzzx" not in [g["topic"] for g in gaps]  # the route word is not asked
    assert [{"kind": "generated", "up": 1, "down": 0}, {"kind": "search", "up": 0, "down": 1}] == (
        report["votes"]
    )
    assert report["pages"][0]["url"].startswith("https://")
    assert report["pages"][0]["cited"] >= 4


async def test_md_html_and_json_show_the_same_numbers_and_no_user_id(seeded: Seeded) -> None:
    """The day's row has the same figures in all three formats; no asker, voter or
    mentioned person's id is anywhere, and channel ids appear only with --by-channel."""
    outputs = {fmt: await _report_async(seeded, "--format", fmt) for fmt in ("md", "json", "html")}
    by_channel = await _report_async(seeded, "--format", "json", "--by-channel")
    day = next(d for d in json.loads(outputs["json"].stdout)["days"] if d["questions"])
    reuse, calls = day["reuse"], day["answer_query"]
    figures = [
        str(n)
        for n in (
            day["questions"], day["generated"], day["search_only"], day["failed"],
            day["rate_limited"], calls["made"], calls["refused"], reuse["exact"],
            reuse["normalised"], reuse["shared"],
        )
    ]  # fmt: skip
    md_row = next(
        line for line in outputs["md"].stdout.splitlines() if line.startswith(f"| {day['day']}")
    )
    md_cells = [c.strip() for c in md_row.strip("|").split("|")]
    html_row = re.search(rf"<tr><td>{day['day']}</td>(.*?)</tr>", outputs["html"].stdout)

    assert all(o.returncode == 0 for o in outputs.values())
    assert figures == md_cells[1:4] + md_cells[5:]  # the fifth column says why, in words
    assert html_row is not None
    assert figures == re.findall(r'<td class="n">(\d+)</td>', html_row.group(1))
    assert "- Questions: 12" in outputs["md"].stdout
    assert "<b>12</b>" in outputs["html"].stdout
    for text in (*[o.stdout for o in outputs.values()], by_channel.stdout):
        for user in USERS:
            assert user not in text, user
    for channel in ("C1", "C2"):
        for output in outputs.values():
            assert not re.search(rf"\b{channel}\b", output.stdout), channel
    assert {"C1": 8, "C2": 2} == json.loads(by_channel.stdout)["channels"]["answers_by_channel"]


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-headless-shell")


async def test_the_html_report_opens_in_headless_chromium(seeded: Seeded) -> None:
    """--out writes one self-contained page (no script, nothing fetched); headless Chromium
    renders it to a screenshot without any network."""
    page = seeded.cwd / "report.html"
    result = await _report_async(seeded, "--format", "html", "--out", str(page))
    html = page.read_text(encoding="utf-8")

    assert (0, "") == (result.returncode, result.stdout)
    assert "<svg" in html
    assert "prefers-color-scheme: dark" in html
    assert not re.search(r"<script|<link|src=|url\(|https?://[^\"<]*\.(?:js|css)", html)
    browser = _chromium()
    if browser is None:
        pytest.skip("no chromium on PATH (apt-get install chromium-headless-shell)")
    shot = seeded.cwd / "report.png"
    proc = await asyncio.to_thread(screenshot, browser, page, shot)
    assert shot.exists(), proc.stderr[-2000:]
    assert shot.stat().st_size > 10_000  # a page was drawn, not a blank


def screenshot(
    browser: str, page: Path, shot: Path, size: str = "1200,1400", dark: bool = False
) -> subprocess.CompletedProcess[str]:
    """Headless Chromium's screenshot of `page`, every host unresolvable (no network)."""
    argv = [
        browser,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--no-first-run",
        "--host-resolver-rules=MAP * ~NOTFOUND",
        f"--window-size={size}",
        f"--screenshot={shot}",
        *(["--force-dark-mode", "--blink-settings=preferredColorScheme=0"] if dark else []),
        page.as_uri(),
    ]
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
