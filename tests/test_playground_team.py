"""The playground drives what a person does with team answers: a message's "More actions" menu
sends Slack's message_action, modals take radio buttons, checkboxes, menus and text as Slack
sends them back, and a button with `confirm` asks first. Real headless Chromium, real bot."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from bot.playground import SHORTCUTS
from tests.playground_driver import Playground, needs_chromium, playground
from tests.playground_shots import QUESTION, TEAM_MARK, save_team_answer

ROOT = Path(__file__).resolve().parents[1]
_Obj = dict[str, Any]


@pytest.fixture
def pg(tmp_path: Path) -> Iterator[Playground]:
    with playground(tmp_path) as running:
        yield running


def _option(text: str, value: str) -> _Obj:
    return {"text": {"type": "plain_text", "text": text}, "value": value}


def _input(block_id: str, label: str, element: _Obj, **more: Any) -> _Obj:
    element = {"action_id": block_id + "_in", **element}
    label_text = {"type": "plain_text", "text": label}
    return {"type": "input", "block_id": block_id, "label": label_text, "element": element, **more}


WHERE = [_option("This channel only", "channel"), _option("The whole workspace", "workspace")]
#: a modal with one input of each kind, as the bot's forms build them
FORM: _Obj = {
    "type": "modal",
    "callback_id": "playground_form",
    "private_metadata": '{"channel": "C0GENERAL"}',
    "title": {"type": "plain_text", "text": "Save a team answer"},
    "submit": {"type": "plain_text", "text": "Save"},
    "blocks": [
        _input("question", "Question", {"type": "plain_text_input", "initial_value": QUESTION}),
        _input("answer", "Answer", {"type": "plain_text_input", "multiline": True}),
        _input(
            "also",
            "Also answers",
            {"type": "plain_text_input", "multiline": True},
            optional=True,
            hint={"type": "plain_text", "text": "One phrasing a line"},
        ),
        _input("where", "Who may see it", {"type": "radio_buttons", "options": WHERE}),
        _input("flags", "Flags", {"type": "checkboxes", "options": WHERE}, optional=True),
        _input("kind", "Kind", {"type": "static_select", "options": WHERE}, optional=True),
    ],
}


def _sent(pg: Playground) -> list[_Obj]:
    """Every payload or event the page sends to the bot from now on."""
    sent: list[_Obj] = []
    pg.page.on(
        "request",
        lambda r: sent.append(r.post_data_json) if r.url.endswith("/ui/send") else None,
    )
    return sent


def test_the_pages_shortcuts_are_the_manifests() -> None:
    manifest = yaml.safe_load((ROOT / "manifest.yml").read_text(encoding="utf-8"))
    declared = [(s["callback_id"], s["name"]) for s in manifest["features"]["shortcuts"]]

    assert sorted(declared) == sorted(SHORTCUTS)


@needs_chromium
def test_ask_googles_docs_from_a_messages_menu_answers_it_in_its_thread(pg: Playground) -> None:
    pg.say(QUESTION)  # plain text in #general: the bot leaves it alone
    mine = pg.log.locator(".msg.you", has_text=QUESTION)

    pg.shortcut(mine, "Ask Google's docs")

    pg.log.locator(".thread .msg.bot", has_text="Here is how").wait_for()
    asked = [c.arguments.get("query", "") for c in pg.docs.tool_calls("answer_query")]
    assert QUESTION in asked[-1]


@needs_chromium
def test_a_modal_sends_each_input_in_slacks_shape(pg: Playground) -> None:
    """Radio buttons, checkboxes, a menu and text (kept initial value, typed, left empty)
    come back as view_submission's state.values, with the view's private_metadata."""
    sent = _sent(pg)
    pg.as_the_bot("views.open", trigger_id="t", view=FORM)
    form = pg.page.get_by_role("dialog", name="Save a team answer")
    form.get_by_role("textbox", name="Answer", exact=True).fill("Use *Terraform*, not gcloud.")
    form.get_by_role("radio", name="The whole workspace").check()
    form.get_by_role("checkbox", name="This channel only").check()

    form.get_by_role("button", name="Save").click()

    form.wait_for(state="hidden")
    view = sent[-1]["payload"]["view"]
    values = view["state"]["values"]
    assert {"type": "plain_text_input", "value": QUESTION} == values["question"]["question_in"]
    assert "Use *Terraform*, not gcloud." == values["answer"]["answer_in"]["value"]
    assert {"type": "plain_text_input", "value": None} == values["also"]["also_in"]
    assert {"type": "radio_buttons", "selected_option": WHERE[1]} == values["where"]["where_in"]
    assert {"type": "checkboxes", "selected_options": [WHERE[0]]} == values["flags"]["flags_in"]
    assert {"type": "static_select", "selected_option": None} == values["kind"]["kind_in"]
    assert ("view_submission", FORM["private_metadata"], "playground_form") == (
        sent[-1]["payload"]["type"],
        view["private_metadata"],
        view["callback_id"],
    )


@needs_chromium
def test_a_required_input_left_empty_is_not_sent(pg: Playground) -> None:
    sent = _sent(pg)
    pg.as_the_bot("views.open", trigger_id="t", view=FORM)
    form = pg.page.get_by_role("dialog", name="Save a team answer")

    form.get_by_role("button", name="Save").click()

    form.get_by_text("Please complete this required field.").first.wait_for()
    assert 2 == form.get_by_text("Please complete this required field.").count()  # answer, where
    assert [] == sent


@needs_chromium
def test_views_update_keeps_what_is_typed_in_the_inputs_it_keeps(pg: Playground) -> None:
    opened = pg.as_the_bot("views.open", trigger_id="t", view=FORM)
    form = pg.page.get_by_role("dialog", name="Save a team answer")
    form.get_by_role("textbox", name="Answer", exact=True).fill("typed")
    form.get_by_role("radio", name="The whole workspace").check()
    renamed = {**FORM["blocks"][1], "block_id": "answer2"}  # a new block: Slack empties it
    blocks = [FORM["blocks"][0], renamed, *FORM["blocks"][2:]]

    pg.as_the_bot("views.update", view_id=opened["view"]["id"], view={**FORM, "blocks": blocks})

    form.locator('[data-block="answer2"]').wait_for()
    assert "" == form.get_by_role("textbox", name="Answer", exact=True).input_value()
    assert form.get_by_role("radio", name="The whole workspace").is_checked()


@needs_chromium
def test_a_button_with_confirm_asks_first_and_sends_only_on_yes(pg: Playground) -> None:
    confirm = {
        "title": {"type": "plain_text", "text": "Remove this team answer?"},
        "text": {"type": "plain_text", "text": "Nobody will be shown it again."},
        "confirm": {"type": "plain_text", "text": "Remove"},
        "deny": {"type": "plain_text", "text": "Keep it"},
        "style": "danger",
    }
    button = {"type": "button", "action_id": "team_remove", "value": "t1", "confirm": confirm}
    button["text"] = {"type": "plain_text", "text": "Remove"}
    blocks = [{"type": "actions", "block_id": "b", "elements": [button]}]
    pg.as_the_bot("chat.postMessage", channel="C0GENERAL", text="A team answer", blocks=blocks)
    sent = _sent(pg)
    remove = pg.log.get_by_role("button", name="Remove")
    asked = pg.page.get_by_role("alertdialog", name="Remove this team answer?")

    remove.click()
    asked.get_by_role("button", name="Keep it").click()
    remove.click()
    asked.get_by_text("Nobody will be shown it again.").wait_for()
    with pg.page.expect_request(lambda r: r.url.endswith("/ui/send")):
        asked.get_by_role("button", name="Remove").click()

    assert ["team_remove"] == [
        a["action_id"] for s in sent for a in s.get("payload", {}).get("actions", [])
    ]


@needs_chromium
def test_a_team_answer_saved_in_the_page_answers_the_question_in_the_dm(pg: Playground) -> None:
    save_team_answer(pg)
    asked = len(pg.docs.tool_calls("answer_query"))

    pg.open("gdocs (direct message)")
    pg.say(QUESTION)

    reply = pg.log.locator(".msg.bot", has_text=TEAM_MARK)
    reply.wait_for()
    pg.settled()
    assert "Terraform" in reply.inner_text()
    assert asked == len(pg.docs.tool_calls("answer_query"))  # Google's docs not asked


@needs_chromium
def test_the_bots_errors_show_under_their_block_and_keep_the_form(pg: Playground) -> None:
    """A question of spaces passes Slack's "required" check; the bot's `errors` say why,
    under the question, and what was typed stays."""
    pg.say(f"@gdocs {QUESTION}")
    pg.settled()
    pg.shortcut(pg.log.locator(".thread .msg.bot").first, "Save as team answer")
    form = pg.page.get_by_role("dialog", name="Save team answer")
    question = form.locator('[data-block^="team_question"]')  # _filled once set
    question.get_by_role("textbox").fill("   ")
    form.get_by_role("textbox", name="Answer", exact=True).fill("Kept")

    form.get_by_role("button", name="Save").click()

    question.locator(".error", has_text="Say which question").wait_for()
    assert "" == form.locator('[data-block="team_answer"] .error').inner_text()
    assert "Kept" == form.get_by_role("textbox", name="Answer", exact=True).input_value()


@needs_chromium
def test_remove_in_the_team_list_asks_first_then_removes(pg: Playground) -> None:
    save_team_answer(pg)
    pg.say("/gdocs team")
    listed = pg.log.locator(".msg.eph", has_text="Team answers given here")
    asked = pg.page.get_by_role("alertdialog", name="Remove this team answer?")

    listed.get_by_role("button", name="Remove").click()
    asked.get_by_role("button", name="Remove").click()

    pg.log.get_by_text("Removed the team answer", exact=False).wait_for()
    assert 0 == listed.count()  # the list replaced where it was shown


@needs_chromium
def test_a_suggestion_reviewed_on_home_for_the_workspace_answers_in_the_dm(
    pg: Playground,
) -> None:
    """A 👎's suggestion, opened with Edit on Home, approved for the whole workspace (a
    choice offered once Slack says #general is public): the team's answer in the DM."""
    question = "How do I delete a bucket?"
    pg.say(f"@gdocs {question}")
    pg.log.locator(".thread .msg.bot", has_text="Here is how").wait_for()
    pg.settled()
    pg.log.get_by_role("button", name=re.compile("unhelpful", re.I)).click()
    pg.log.locator(".msg.eph").get_by_role("button", name=re.compile("wrong", re.I)).click()
    form = pg.page.get_by_role("dialog")
    form.get_by_role("textbox", name="Suggest a better answer").fill("Run `terraform destroy`.")
    form.locator("button.primary").click()
    form.wait_for(state="hidden")
    pg.open("gdocs Home")
    pg.page.get_by_role("region", name="Home").get_by_role("button", name="Edit").click()
    form.get_by_role("radio", name="The whole workspace").check()
    form.get_by_role("button", name="Approve").click()
    form.wait_for(state="hidden")

    pg.open("gdocs (direct message)")
    pg.say(question)

    reply = pg.log.locator(".msg.bot", has_text=TEAM_MARK)
    reply.wait_for()
    assert "terraform destroy" in reply.inner_text()
