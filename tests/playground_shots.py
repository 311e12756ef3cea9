"""docs/screenshots/: each reply kind as the playground draws it (run by `scripts/screenshots`).

The playground runs against tests/fakes' loopback MCP servers with canned answers, then against
the loopback REST face for the cited answer, so nothing reaches Google; each shot waits for what
it shows to be on the page, never for a time."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import expect

from bot.settings import Settings
from tests.playground_driver import (
    BUCKETS,
    CITED_QUESTION,
    Playground,
    chromium,
    fail_every_call,
    playground,
)

OUT = Path(__file__).resolve().parents[1] / "docs" / "screenshots"
#: a command the cited page does not have (a misspelt flag): the answer gets a ⚠
WRONG_FLAG = (
    "Create it with the gcloud CLI:\n\n"
    "```sh\ngcloud storage buckets create gs://my-bucket --location=US --uniform-acess\n```"
)


IAM = "documents/docs.cloud.google.com/storage/docs/access-control/iam"
#: answers as Google's answer_query gives them, for the questions the pictures ask
CANNED = {
    "How do I create a Cloud Storage bucket?": (
        "Create the bucket with the gcloud CLI:\n\n"
        "```sh\ngcloud storage buckets create gs://BUCKET_NAME --location=US\n```\n\n"
        "`BUCKET_NAME` must be unique across Cloud Storage. In the Google Cloud console, "
        "open **Cloud Storage › Buckets** and click **Create** instead.",
        [BUCKETS],
    ),
    "How do I create a bucket with the gcloud CLI?": (
        "Run `gcloud storage buckets create gs://BUCKET_NAME --location=US`. To let a "
        "colleague manage it, grant them `roles/storage.admin` on the bucket.",
        [BUCKETS, IAM],
    ),
    "How do I create a bucket in Europe?": (
        "Run `gcloud storage buckets create gs://BUCKET_NAME --location=EU`.",
        [BUCKETS],
    ),
    "How do I create a bucket with uniform access?": (WRONG_FLAG, [BUCKETS]),
}


QUESTION = "How do I create a Cloud Storage bucket?"
#: what the team settled, saved on the bot's answer in #general
#: the line that marks a team answer
TEAM_MARK = "Team answer · saved by"
TEAM_TEXT = "We create buckets with Terraform (`infra/buckets`), never with gcloud by hand."


def save_team_answer(pg: Playground, shot: Path | None = None) -> None:
    """`@gdocs` QUESTION in #general, then Save as team answer on the bot's reply: the team's
    text, for the whole workspace (the filled form pictured into `shot`)."""
    pg.say(f"@gdocs {QUESTION}")
    pg.settled()
    pg.shortcut(pg.log.locator(".thread .msg.bot").first, "Save as team answer")
    form = pg.page.get_by_role("dialog", name="Save team answer")
    expect(form.get_by_role("textbox", name="Question")).to_have_value(QUESTION)  # filled in
    form.get_by_role("textbox", name="Answer", exact=True).fill(TEAM_TEXT)
    form.get_by_role("radio", name="The whole workspace").check()
    if shot is not None:
        _shot(pg, shot, pg.page)
    form.get_by_role("button", name="Save").click()
    form.wait_for(state="hidden")


def last_item(pg: Playground, has: str, asked: str) -> Any:
    """The newest conversation item (a message and its thread) holding `has` (a selector) and
    the words `asked`: an earlier item matches `has` too, and may be found first."""
    item = pg.log.locator(".item", has=pg.page.locator(has), has_text=asked).last
    item.wait_for()
    pg.settled()
    return item


def _shot(pg: Playground, path: Path, target: Any) -> Path:
    try:
        target.screenshot(path=str(path))
    except PlaywrightError:  # redrawn while being taken (a late update): once more
        pg.settled()
        target.screenshot(path=str(path))
    return path


def ask_cited(pg: Playground) -> Any:
    """On the REST face: the channel limited to Cloud docs, then the cited question by
    mention; the conversation item of its streamed answer."""
    pg.say("/gdocs channel products cloud")
    pg.log.get_by_text("limited my answers here", exact=False).wait_for()
    pg.say("@gdocs " + CITED_QUESTION)
    return last_item(pg, ".thread .msg.bot .blocks", CITED_QUESTION)


def take_rest(pg: Playground, out: Path) -> list[Path]:
    """The pictures of the REST backend: an answer with markers, dates and its scope line."""
    return [_shot(pg, out / "cited-answer.png", ask_cited(pg))]


def take(pg: Playground, out: Path) -> list[Path]:
    shots: list[Path] = []

    def shot(name: str, target: Any) -> None:
        shots.append(_shot(pg, out / name, target))

    pg.docs.answers.update(CANNED)
    pg.say("@gdocs How do I create a Cloud Storage bucket?")
    last_item(pg, ".thread .msg.bot .blocks", "Cloud Storage bucket")
    shot("streamed-answer.png", pg.page)

    pg.say("/gdocs How do I create a bucket with the gcloud CLI?")
    shot("slash-answer.png", last_item(pg, ".msg.bot:not(.eph) .blocks", "gcloud CLI?"))

    pg.say("@gdocs How do I create a bucket with uniform access?")
    shot("verified-warning.png", last_item(pg, ".thread .msg.bot .blocks", "uniform access"))

    fail_every_call(pg.docs)
    pg.say("/gdocs How do I delete a bucket?")
    shot("error-try-again.png", last_item(pg, "button:text('Try again')", "delete a bucket"))
    pg.docs.faults.clear()

    pg.say("/gdocs private How do I create a bucket in Europe?")
    shot("private-share.png", last_item(pg, "button:text-matches('share', 'i')", "in Europe"))

    pg.docs.quota_exhausted = "http"  # from here on, generated answers are used up
    pg.say("@gdocs How do I make a bucket public?")
    shot("quota-fallback.png", last_item(pg, ".thread .msg.bot .blocks", "bucket public"))

    pg.open("gdocs Home")
    pg.page.locator("#home .blocks").wait_for()
    shot("home.png", pg.page)
    return shots


def take_team(pg: Playground, out: Path) -> list[Path]:
    """A team answer saved on the bot's reply in #general, then given in the DM."""
    pg.docs.answers.update(CANNED)
    save_team_answer(pg, shot=out / "team-answer-form.png")
    pg.open("gdocs (direct message)")
    pg.say(QUESTION)
    answer = _shot(pg, out / "team-answer.png", last_item(pg, ".msg.bot", TEAM_MARK))
    return [out / "team-answer-form.png", answer]


def main() -> int:
    if chromium() is None:
        print("screenshots: no Chromium on PATH (apt-get install chromium)", file=sys.stderr)
        return 2
    for name in Settings.model_fields:  # the developer's own settings stay out of it
        os.environ.pop(name.upper(), None)
    OUT.mkdir(parents=True, exist_ok=True)
    for rest, taking in ((False, take), (False, take_team), (True, take_rest)):
        with tempfile.TemporaryDirectory() as work, playground(Path(work), rest=rest) as pg:
            for path in taking(pg, OUT):
                print(path.relative_to(OUT.parents[1]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
