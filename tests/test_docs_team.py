"""docs/using.md's "Team answers" section states the bounds, days and commands the code has,
so the guide cannot drift from bot/team.py, the forms or `gdocs-bot team`; the README points
at that section, which exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bot.cli import main
from bot.render import FORM_ANSWER_CHARS, MAX_LISTED, MAX_TEAM_ITEMS
from bot.settings import Settings
from bot.team import (
    DRAFT_DAYS,
    KEPT_PAST_REVIEW_DAYS,
    MAX_ANSWER_CHARS,
    MAX_PHRASINGS,
    MAX_QUESTION_CHARS,
    MAX_TEAM_ANSWERS,
)

ROOT = Path(__file__).resolve().parents[1]
_WORDS = {5: "five", 15: "15"}


def _guide() -> str:
    return (ROOT / "docs" / "using.md").read_text(encoding="utf-8")


def _section() -> str:
    found = _guide().partition("\n## Team answers\n")[2].partition("\n## ")[0]
    assert found, 'docs/using.md has no "## Team answers" section'
    return " ".join(found.split())  # a phrase may wrap


def _help(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert 0 == main([*argv, "--help"])
    return capsys.readouterr().out


def test_the_team_answers_section_states_the_codes_bounds_and_days() -> None:
    """Each number the section gives is the code's: the form's and the store's answer sizes,
    a question's, the phrasings, the answers kept, the list's and Home's lengths, a draft's
    life, the default review date and how long past it an answer is kept."""
    section = _section()
    review_days = Settings.model_fields["team_answer_review_days"].default
    stated = {
        "form's answer": f"up to {FORM_ANSWER_CHARS:,} characters, a Slack form's limit",
        "import's answer": f"`team import` takes up to {MAX_ANSWER_CHARS:,}",
        "phrasings": f"up to {_WORDS[MAX_PHRASINGS]} other ways to ask it",
        "question": f"each up to {MAX_QUESTION_CHARS:,} characters like the question",
        "answers kept": f"the {MAX_TEAM_ANSWERS:,} the bot keeps",
        "draft": f"kept {DRAFT_DAYS} days",
        "suggestion": f"(Markdown, up to {FORM_ANSWER_CHARS:,} characters)",
        "list": f"({MAX_LISTED} at most;",
        "home": f"{_WORDS[MAX_TEAM_ITEMS]}, then how many more",
        "review": f"`TEAM_ANSWER_REVIEW_DAYS` ({review_days}) days",
        "kept past review": f"deleted {KEPT_PAST_REVIEW_DAYS} days after its review date",
    }
    missing = {name: phrase for name, phrase in stated.items() if phrase not in section}
    assert {} == missing


def test_the_guide_names_every_team_command_and_option_the_cli_has(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`gdocs-bot team`'s actions and their options, and `ask --no-team`, are all in the
    guide's command list; the section says what each does."""
    actions = re.findall(r"^    (\w+) ", _help(capsys, "team"), re.M)
    assert ["export", "import"] == actions
    block = _guide().partition("\n## Command line\n")[2]
    assert "gdocs-bot team export [--out FILE]" in block
    assert "--out FILE" in _help(capsys, "team", "export")
    assert "gdocs-bot team import FILE|-" in block
    assert "--no-team" in _help(capsys, "ask")
    assert "gdocs-bot ask [--no-team]" in block
    section = _section()
    for said in ("`gdocs-bot team export [--out FILE]`", "`gdocs-bot team import FILE`"):
        assert said in section


def test_the_readme_links_the_team_answers_section() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "](docs/using.md#team-answers)" in readme
    assert "\n## Team answers\n" in _guide()
    assert "![A team answer](docs/screenshots/team-answer.png)" in readme


_QUOTED = [  # words the guide and troubleshooting quote from the bot, and where
    ("using.md", "Save as team answer"),
    ("using.md", "Also answers"),
    ("using.md", "This channel only"),
    ("using.md", "The whole workspace"),
    ("using.md", "Suggest a better answer"),
    ("using.md", "Suggested team answers"),
    ("using.md", "Review suggestion"),
    ("using.md", "Team answers due for review"),
    ("using.md", "Ask Google's docs too"),
    ("using.md", "Team answers: "),
    ("troubleshooting.md", "Couldn't save it: the bot's storage isn't answering"),
    ("troubleshooting.md", "Only its author and the team's admins can change that team answer."),
    (
        "troubleshooting.md",
        "Only the team's admins can approve, edit or discard a suggested answer.",
    ),
]


@pytest.mark.parametrize(("page", "words"), _QUOTED)
def test_words_the_docs_quote_are_the_bots(page: str, words: str) -> None:
    """A label or sentence the docs quote is on their page and in bot/ as written."""
    assert words in " ".join((ROOT / "docs" / page).read_text(encoding="utf-8").split())
    sources = (p.read_text(encoding="utf-8") for p in (ROOT / "bot").rglob("*.py"))
    assert any(words in text for text in sources)
