"""Drive `gdocs-bot playground` in headless Chromium: shared by tests/test_playground.py and
`scripts/screenshots` (which refreshes docs/screenshots/).

The playground runs as a real subprocess (`python -m bot playground --port 0`) against the
loopback fakes of tests/fakes (the MCP server, or with `rest=True` the REST face and a cited
answer), with nothing else reachable; Chromium is the system's
(Debian's chromium or chromium-headless-shell), driven by Playwright's Python package with
`executable_path`, so no browser is downloaded. Every wait is for something on the page."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.bot_process import BotProcess
from tests.fakes.dk_rest import FakeDeveloperKnowledgeRest, RestAnswer
from tests.fakes.mcp_servers import FakeDeveloperKnowledge, Fault

API_KEY = "test-key"
BUCKETS = "documents/docs.cloud.google.com/storage/docs/creating-buckets"
#: what a page shows at most for one answer to arrive (a cold start included)
WAIT_MS = 20_000


def chromium() -> str | None:
    """The system's Chromium, as CI installs it; None when there is none."""
    for name in ("chromium-headless-shell", "chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return None


def docs_server() -> FakeDeveloperKnowledge:
    """Developer Knowledge with canned pages (started): the answers' sources."""
    server = FakeDeveloperKnowledge()
    server.api_key = API_KEY
    server.add_document(
        BUCKETS,
        "Create buckets | Cloud Storage",
        "# Create buckets\n\nTo create a bucket, run:\n\n"
        "```sh\ngcloud storage buckets create gs://BUCKET_NAME --location=US\n```\n\n"
        "## Console\n\nIn the Google Cloud console, click **Create**.",
    )
    server.add_document(
        "documents/docs.cloud.google.com/storage/docs/access-control/iam",
        "IAM for Cloud Storage",
        "# IAM\n\nGrant `roles/storage.admin` with\n"
        "`gcloud storage buckets add-iam-policy-binding`.",
    )
    server.start()
    return server


#: the question of the cited REST answer, asked in a channel set to `products cloud`
CITED_QUESTION = "How do I create a bucket in Zürich?"
LOCATIONS = "documents/docs.cloud.google.com/storage/docs/locations"
#: Google's answer: accents, an em dash and an emoji before the cited spans, so that a marker
#: placed by characters rather than UTF-8 bytes would land mid-word
CITED_TEXT = (
    "Für Zürich — 🇨🇭 — create the bucket with "
    "`gcloud storage buckets create gs://BUCKET_NAME --location=europe-west6`. "
    "The location europe-west6 is Zürich; it cannot be changed once the bucket exists."
)


def _byte_span(text: str, part: str) -> tuple[int, int]:
    """`part`'s place in `text` in UTF-8 bytes, as Google's citations count."""
    start = len(text[: text.index(part)].encode())
    return start, start + len(part.encode())


def cited_answer() -> RestAnswer:
    """Two sentences, each cited to its page: the buckets page, then the (large) locations."""
    first = _byte_span(CITED_TEXT, "create the bucket with")
    second = _byte_span(CITED_TEXT, "The location europe-west6 is Zürich")
    return RestAnswer(CITED_TEXT, [(*first, [0]), (*second, [1])], [BUCKETS, LOCATIONS])


def rest_docs_server() -> FakeDeveloperKnowledgeRest:
    """Developer Knowledge's REST face (started) with two dated pages, one large enough to
    come as a file on Show full doc, and the cited answer to CITED_QUESTION."""
    server = FakeDeveloperKnowledgeRest()
    server.api_key = API_KEY
    server.add_document(
        BUCKETS,
        "Create buckets | Cloud Storage",
        "# Create buckets\n\nTo create a bucket, run:\n\n"
        "```sh\ngcloud storage buckets create gs://BUCKET_NAME --location=US\n```",
        update_time=datetime(2026, 11, 3, 17, 5, tzinfo=UTC),
    )
    rows = "".join(f"| europe-west{n} | region {n} |\n" for n in range(1, 13))
    server.add_document(
        LOCATIONS,
        "Bucket locations | Cloud Storage",
        "# Bucket locations\n\n| Location | Zürich |\n| --- | --- |\n" + rows * 120,
        update_time=datetime(2026, 9, 21, 9, 0, tzinfo=UTC),
    )
    server.answers[CITED_QUESTION] = cited_answer()
    return server.start()


def fail_every_call(server: FakeDeveloperKnowledge, times: int = 20) -> None:
    """The next `times` calls answer Google's HTTP 500."""
    body = b'{"error": {"code": 500, "message": "internal", "status": "INTERNAL"}}'
    server.faults.extend(Fault(status=500, body=body) for _ in range(times))


needs_chromium = pytest.mark.skipif(
    chromium() is None or importlib.util.find_spec("playwright") is None,
    reason="the playground's page is tested in a real browser: needs Chromium on PATH "
    "(apt-get install chromium-headless-shell) and Playwright (the `test` extra)",
)


@dataclass
class Playground:
    """A running playground and a Chromium page on it."""

    #: the one person in the page's workspace (bot.playground's USER)
    USER = "U0YOU"

    page: Any  # playwright.sync_api.Page
    process: BotProcess
    docs: Any  # FakeDeveloperKnowledge, or FakeDeveloperKnowledgeRest with `rest=True`

    @property
    def log(self) -> Any:
        return self.page.get_by_role("log")

    def say(self, text: str) -> None:
        """Type `text` in the message box and press Enter."""
        box = self.page.get_by_role("textbox", name="Message")
        box.fill(text)
        box.press("Enter")

    def calls(self) -> list[dict[str, Any]]:
        """What the fake Slack recorded: Web API calls, response_url posts, acks, typed text."""
        return list(self.page.request.get(self.page.url + "ui/log?after=0").json())

    def open(self, name: str) -> None:
        """The channel, the DM or Home, as the sidebar names them."""
        self.page.get_by_role("navigation").get_by_role("button", name=name).click()

    def as_the_bot(self, method: str, **args: Any) -> dict[str, Any]:
        """Call the page's fake Slack Web API as the bot would (a view, a message to draw)."""
        answer = self.page.request.post(self.page.url + "api/" + method, data=args)
        return dict(answer.json())

    def shortcut(self, message: Any, name: str) -> None:
        """`name` from the "More actions" menu of `message` (a `.msg` locator)."""
        message.hover()
        message.get_by_role("button", name="More actions").click()
        message.get_by_role("menuitem", name=name).click()

    def last_message(self) -> Any:
        return self.log.locator(".msg").last

    def settled(self) -> None:
        """No stream still open and no status line: the bot has finished."""
        self.page.wait_for_function(
            "() => !document.querySelector('#log .stop, #log .status')", timeout=WAIT_MS
        )

    def screenshot(self, path: Path, target: Any = None) -> None:
        self.settled()
        (target or self.page).screenshot(path=str(path))


@contextmanager
def playground(workdir: Path, *, rest: bool = False, **env: str) -> Iterator[Playground]:
    """The docs fake (MCP, or the REST face with `rest`), the playground on a free port and a
    headless Chromium page on it."""
    from playwright.sync_api import sync_playwright

    browser_path = chromium()
    assert browser_path is not None, "no chromium on PATH"
    docs: FakeDeveloperKnowledge | FakeDeveloperKnowledgeRest
    if rest:
        docs = rest_docs_server()
        backend = {"DEVELOPER_KNOWLEDGE_API": "rest", "DEVELOPER_KNOWLEDGE_REST_URL": docs.url}
    else:
        docs = docs_server()
        backend = {"DEVELOPER_KNOWLEDGE_MCP_URL": docs.url}
    settings = {"GOOGLE_API_KEY": API_KEY, **backend, **env}
    process = BotProcess(settings, workdir, "playground", "--port", "0")
    try:
        port = process.wait_listening()
        with sync_playwright() as driver:
            browser = driver.chromium.launch(
                executable_path=browser_path,
                args=["--no-sandbox"] if _is_root() else [],
            )
            page = browser.new_page(viewport={"width": 1100, "height": 900})
            page.set_default_timeout(WAIT_MS)
            page.goto(f"http://127.0.0.1:{port}/")
            try:
                yield Playground(page, process, docs)
            finally:
                browser.close()
    finally:
        process.kill()
        docs.stop()


def _is_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


SHOW_DOC = re.compile(r"full doc", re.IGNORECASE)
