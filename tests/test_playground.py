"""`gdocs-bot playground` in a real headless Chromium: what is typed reaches the real bot (signed
requests on loopback), the bot's Slack calls come back to the page, and its buttons work.
Skipped when no Chromium is installed (CI installs Debian's chromium-headless-shell)."""

from __future__ import annotations

import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.fakes.bot_process import BotProcess, run_to_exit
from tests.playground_driver import (
    API_KEY,
    SHOW_DOC,
    Playground,
    fail_every_call,
    needs_chromium,
    playground,
)

QUESTION = "How do I create a Cloud Storage bucket?"


@pytest.fixture
def pg(tmp_path: Path) -> Iterator[Playground]:
    with playground(tmp_path) as running:
        yield running


def test_playground_without_google_settings_says_what_is_missing(tmp_path: Path) -> None:
    result = run_to_exit({}, tmp_path, "playground", "--port", "0")

    assert 2 == result.returncode
    assert "GOOGLE_API_KEY is not set" in result.stderr
    assert "SLACK" not in result.stderr  # it makes up Slack's side itself
    assert len(result.stderr.strip().splitlines()) <= 2


def test_the_cli_does_not_load_the_playground_until_asked() -> None:
    """`serve`'s cold start stays as it was: the CLI imports no playground module."""
    code = "import sys, bot.cli.commands; print([m for m in sys.modules if 'playground' in m])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "[]" == out.stdout.strip()


@pytest.mark.parametrize(
    ("env", "said"),
    [({}, "state: memory://"), ({"STATE_URL": "sqlite:///kept.db"}, "state: sqlite:///kept.db")],
)
def test_the_start_line_says_where_state_is_kept(
    tmp_path: Path, env: dict[str, str], said: str
) -> None:
    process = BotProcess({"GOOGLE_API_KEY": API_KEY, **env}, tmp_path, "playground", "--port", "0")
    try:
        line = process.wait_for_line(r"listening on http://127\.0\.0\.1:\d+/ \(state: [^)]*\)")
    finally:
        process.kill()

    assert said in line.group(0)
    assert (tmp_path / "gdocs-state.db").exists() is False  # serve's default file is not made


def test_other_sites_in_the_browser_cannot_use_the_playground(tmp_path: Path) -> None:
    """A cross-site form (not JSON) and a rebound host name are refused before the bot."""
    env = {"GOOGLE_API_KEY": API_KEY}
    process = BotProcess(env, tmp_path, "playground", "--port", "0")
    try:
        url = f"http://127.0.0.1:{process.wait_listening()}"
        form = httpx.post(
            f"{url}/ui/send", content=b'{"event": {}}', headers={"Content-Type": "text/plain"}
        )
        rebound = httpx.get(f"{url}/ui/log", headers={"Host": "attacker.example:80"})
        page = httpx.get(f"{url}/")
    finally:
        process.kill()

    assert (415, 421, 200) == (form.status_code, rebound.status_code, page.status_code)
    assert 'aria-label="Message"' in page.text
    assert "/*IDS*/" not in page.text


@needs_chromium
def test_a_mention_typed_in_the_channel_is_answered_with_its_sources(pg: Playground) -> None:
    pg.say(f"@gdocs {QUESTION}")

    reply = pg.log.locator(".msg", has_text="Here is how")
    reply.wait_for()
    pg.settled()
    text = reply.inner_text()
    assert QUESTION in text
    assert "Create buckets" in text  # the cited page, listed as a source
    assert "answer_query" in [c.tool for c in pg.docs.calls]


@needs_chromium
def test_show_full_doc_posts_the_page(pg: Playground) -> None:
    pg.say(f"@gdocs {QUESTION}")
    pg.settled()

    pg.log.get_by_role("button", name=SHOW_DOC).first.click()

    pg.log.get_by_text("In the Google Cloud console").wait_for()


@needs_chromium
def test_a_reply_in_the_answers_thread_is_answered_as_a_follow_up(pg: Playground) -> None:
    pg.say(f"@gdocs {QUESTION}")
    pg.settled()
    pg.log.get_by_role("button", name="Reply in thread").click()

    pg.say("And how do I delete it?")

    pg.log.locator(".thread .msg.bot").nth(1).wait_for()
    asked = [c.arguments.get("query", "") for c in pg.docs.tool_calls("answer_query")]
    assert "delete it" in asked[-1]


@needs_chromium
def test_a_slash_command_is_acknowledged_to_the_asker_then_answered(pg: Playground) -> None:
    pg.say(f"/gdocs {QUESTION}")

    pg.log.locator(".msg", has_text="Here is how").wait_for()
    assert 0 == pg.log.locator(".msg.eph").count()  # the ephemeral "looking" note is gone
    assert any(e["method"] == "ack" for e in pg.calls())


@needs_chromium
def test_a_direct_message_is_answered_in_the_dm(pg: Playground) -> None:
    pg.open("gdocs (direct message)")
    pg.say(QUESTION)

    pg.log.locator(".msg", has_text="Here is how").wait_for()
    assert "you" in pg.log.inner_text()


@needs_chromium
def test_a_thumbs_up_reaches_the_bot(pg: Playground) -> None:
    pg.say(f"@gdocs {QUESTION}")
    pg.settled()

    pg.log.get_by_role("button", name=re.compile("helpful", re.I)).first.click()

    pg.log.locator(".msg.bot.eph").wait_for()  # the bot's word to the voter only
    clicks = [e for e in pg.calls() if e["method"] == "chat.postEphemeral"]
    assert [pg.USER] == [e["args"]["user"] for e in clicks]


@needs_chromium
def test_a_thumbs_down_opens_the_comment_form_which_sends(pg: Playground) -> None:
    pg.say(f"@gdocs {QUESTION}")
    pg.settled()
    pg.log.get_by_role("button", name=re.compile("unhelpful", re.I)).first.click()
    pg.log.locator(".msg.eph").get_by_role("button").click()  # the invitation to say why

    form = pg.page.get_by_role("dialog")
    form.get_by_role("textbox", name="What was wrong?").fill("It misses the location flag")
    form.locator("button.primary").click()

    form.wait_for(state="hidden")
    pg.log.locator(".msg.eph").nth(1).wait_for()  # thanked, to the voter only


@needs_chromium
def test_stop_ends_a_stream_in_progress(pg: Playground) -> None:
    gate = threading.Event()
    pg.docs.answer_gate = gate
    try:
        pg.say(f"@gdocs {QUESTION}")
        pg.log.get_by_role("button", name="Stop").click()

        pg.log.get_by_text(re.compile("stopped", re.I)).first.wait_for()
    finally:
        gate.set()


@needs_chromium
def test_an_error_offers_try_again_which_asks_again(pg: Playground) -> None:
    fail_every_call(pg.docs)
    pg.say(f"/gdocs {QUESTION}")
    again = pg.log.get_by_role("button", name="Try again")
    again.wait_for()
    pg.docs.faults.clear()

    again.click()

    pg.log.locator(".msg", has_text="Here is how").wait_for()


@needs_chromium
def test_a_private_answer_can_be_shared_in_the_channel(pg: Playground) -> None:
    pg.say(f"/gdocs private {QUESTION}")
    pg.log.get_by_role("button", name=re.compile("share", re.I)).click()

    shared = pg.log.locator(".msg:not(.eph)", has_text="Here is how")
    shared.wait_for()


@needs_chromium
def test_home_lists_the_question_and_ask_again_answers_in_the_dm(pg: Playground) -> None:
    pg.say(f"/gdocs {QUESTION}")
    pg.log.locator(".msg", has_text="Here is how").wait_for()

    pg.open("gdocs Home")
    home = pg.page.get_by_role("region", name="Home")
    home.get_by_text(QUESTION).first.wait_for()
    home.get_by_role("button", name="Ask again").first.click()
    pg.open("gdocs (direct message)")

    pg.log.locator(".msg", has_text="Here is how").wait_for()


@needs_chromium
def test_the_dm_offers_the_suggested_prompts_which_ask(pg: Playground) -> None:
    pg.open("gdocs (direct message)")

    pg.page.locator("#prompts button").first.click()

    pg.log.locator(".msg.bot").first.wait_for()


@needs_chromium
@pytest.mark.parametrize("how", ["@gdocs", "/gdocs"])  # streamed Markdown; mrkdwn blocks
def test_answer_text_is_drawn_as_text_never_as_markup(pg: Playground, how: str) -> None:
    """Whatever the upstream says reaches the page as text: no element, no script runs."""
    question = "What does the page show for markup?"
    markup = '<img src=x onerror="window.pwned=1"> <script>window.pwned=2</script> *bold*'
    pg.docs.answers[question] = (markup, [])
    pg.say(f"{how} {question}")

    reply = pg.log.locator(".msg.bot", has_text="bold")
    reply.wait_for()
    pg.settled()
    assert "<script>window.pwned=2</script>" in reply.inner_text()
    assert 0 == pg.log.locator("img, script").count()
    assert pg.page.evaluate("() => window.pwned === undefined")
