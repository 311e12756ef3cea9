"""The marks in words: under each checked block, one summary line, nothing without code;
escaped, and within Slack's block and character budgets."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from bot.models import Answer, SnippetCheck, Verification
from bot.render import render_answer


def _contexts(answer: Answer) -> list[str]:
    blocks = render_answer(answer)["blocks"]
    return [e["text"] for b in blocks if b["type"] == "context" for e in b["elements"]]


def _check(result: str, **extra: object) -> SnippetCheck:
    return SnippetCheck.model_validate(
        {"snippet": "gcloud run deploy x", "kind": "command", "result": result, **extra}
    )


BLOCK = "```\ngcloud run deploy x\n```"


def mark_lines(checks: list[SnippetCheck]) -> list[str]:
    """The lines under a checked block (the checks anchored at its last line)."""
    anchored = tuple(check.model_copy(update={"anchor": 2}) for check in checks)
    verification = Verification(status="checked", snippets=anchored)
    answer = Answer(query="q", kind="answer", text=BLOCK, verification=verification)
    return _contexts(answer)[0].split("\n")


def summary_line(verification: Verification | None) -> str | None:
    """The context line at the end of an answer with one line of text, if it has one."""
    answer = Answer(query="q", kind="answer", text="x", verification=verification)
    said = [line for line in _contexts(answer) if "cited pages" in line]
    return said[-1] if said else None


def test_marks_say_where_a_command_is_and_what_is_missing() -> None:
    """✓ with the page and section; ⚠ naming the flag, said two ways."""
    found = _check("found", title="Deploying", uri="https://x/d", section="Deploy")
    typo = _check("partly", missing=("--service-acount",))
    other = _check("partly", missing=("--machine-type",), elsewhere=True)
    missing = _check("not_found", missing=("rollout",))
    assert mark_lines([found, typo, other, missing]) == [
        "✓ in _<https://x/d|Deploying>_ › Deploy",
        "⚠ `--service-acount` is not in the cited pages — check before running",
        "⚠ `--machine-type` is not shown with this command in the cited pages — check before "
        "running",
        "⚠ `rollout` is not in the cited pages — check before running",
    ]


def test_summary_counts_found_and_partly() -> None:
    """ "2 of 3 commands appear in the cited pages"; the partly ones said; none: no line."""
    three = Verification(
        status="checked", snippets=(_check("found"), _check("found"), _check("not_found"))
    )
    mixed = Verification(status="checked", snippets=(_check("found"), _check("partly")))
    assert "2 of 3 commands appear in the cited pages" == summary_line(three)
    assert "1 of 2 commands appear in the cited pages, 1 only in part" == summary_line(mixed)
    assert summary_line(Verification(status="checked")) is None
    assert summary_line(None) is None


def test_an_answer_without_code_renders_as_if_never_checked() -> None:
    """No code: the same message with or without a check."""
    plain = Answer(query="q", kind="answer", text="Cloud Run scales to zero.")
    checked = plain.model_copy(update={"verification": Verification(status="checked")})
    assert render_answer(plain) == render_answer(checked)


def test_unchecked_says_so_once_and_marks_nothing() -> None:
    """Pages not fetched: one line, no ✓ or ⚠."""
    snippets = (_check("unchecked"),)
    answer = Answer(
        query="q",
        kind="answer",
        text=BLOCK,
        verification=Verification(status="unchecked", snippets=snippets),
    )
    assert ["Commands not checked (the cited pages could not be fetched)"] == _contexts(answer)


def test_many_marked_blocks_stay_within_slacks_budgets_and_keep_the_summary() -> None:
    """60 code blocks, each marked: the message is shortened, its summary kept."""
    text = "\n\n".join(f"Step {i}:\n\n```\ngcloud run deploy s{i}\n```" for i in range(60))
    snippets = tuple(_check("not_found", missing=("x" * 70,), anchor=4 + 6 * i) for i in range(60))
    answer = Answer(
        query="q",
        kind="answer",
        text=text,
        verification=Verification(status="checked", snippets=snippets),
    )
    msg = render_answer(answer, feedback_id="abc")
    assert len(msg["blocks"]) <= 50
    assert len(msg["text"]) + _chars_recursively(msg["blocks"]) <= 11_500
    assert "0 of 60 commands appear in the cited pages" in _contexts(answer)


_hostile = st.sampled_from(["<!channel>", "<@U123>", "<https://evil|x>", "&lt;", "`", "*b*"])


@given(
    st.lists(_hostile, min_size=1, max_size=4), st.sampled_from(["found", "partly", "not_found"])
)
def test_page_and_answer_text_in_marks_is_inert(parts: list[str], result: str) -> None:
    """Whatever a page's title or section, or an answer's command, holds: no mention and no
    link but the page's own."""
    hostile = " ".join(parts)
    check = _check(
        result,
        title=hostile,
        section=hostile,
        uri="https://x/d",
        missing=(hostile,),
        snippet=hostile,
    )
    for line in mark_lines([check]):
        cleaned = line.replace("<https://x/d|", "")
        assert "<!" not in cleaned
        assert "<@" not in cleaned
        assert "<http" not in cleaned


def _chars_recursively(value: object) -> int:
    if isinstance(value, str):
        return len(value)
    if isinstance(value, dict):
        return sum(_chars_recursively(v) for v in value.values())
    if isinstance(value, list):
        return sum(_chars_recursively(v) for v in value)
    return 0
