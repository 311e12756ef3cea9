"""The marks in words: one verdict per command, under its block, naming the command and the
source by its number; said once, the same in Slack, the stream and the CLI; the step's
count agrees with them; escaped, and within Slack's block and character budgets."""

from __future__ import annotations

import re
import string

from hypothesis import given
from hypothesis import strategies as st

from bot.models import Answer, Reference, SnippetCheck, Verification
from bot.render import (
    answer_markdown,
    answer_parts,
    render_answer,
    streamed_answer,
    verify_status,
    verify_summary,
)

SOURCES = (
    Reference(name="documents/a", uri="https://x/a", title="Deploying"),
    Reference(name="documents/b", uri="https://x/b", title="Buckets"),
)


def _contexts(answer: Answer) -> list[str]:
    blocks = render_answer(answer)["blocks"]
    return [e["text"] for b in blocks if b["type"] == "context" for e in b["elements"]]


def _check(result: str, **extra: object) -> SnippetCheck:
    return SnippetCheck.model_validate(
        {"snippet": "gcloud run deploy my-service", "kind": "command", "result": result, **extra}
    )


BLOCK = "```\ngcloud run deploy my-service\n```"


def mark_lines(checks: list[SnippetCheck]) -> list[str]:
    """The lines under a checked block (the checks anchored at its last line)."""
    anchored = tuple(check.model_copy(update={"anchor": 2}) for check in checks)
    verification = Verification(status="checked", snippets=anchored)
    answer = Answer(
        query="q", kind="answer", text=BLOCK, references=SOURCES, verification=verification
    )
    return _contexts(answer)[0].split("\n")


def test_each_verdict_names_its_command_and_its_source_by_number() -> None:
    """✓ with the source's number and section (the Sources list names the page); ⚠ naming
    the command and what is missing, said three ways."""
    table = [
        (
            _check("found", uri="https://x/b", section="Deploy", title="Buckets"),
            "✓ `gcloud run deploy` — in source 2, under “Deploy”",
        ),
        (
            _check("found", uri="https://x/a", title="Deploying"),
            "✓ `gcloud run deploy` — in source 1",
        ),
        (
            _check("found", uri="https://x/b", section="Buckets", title="Buckets · Storage"),
            "✓ `gcloud run deploy` — in source 2",
        ),
        (
            _check("found", uri="https://x/a", section="Deploying", title="Deploying"),
            "✓ `gcloud run deploy` — in source 1",
        ),
        (
            _check("found", uri="https://x/a", section="Deploy", title="Deploying"),
            "✓ `gcloud run deploy` — in source 1, under “Deploy”",
        ),
        (
            _check("partly", missing=("--service-acount",)),
            "⚠ `gcloud run deploy` — `--service-acount` is not in the cited pages",
        ),
        (
            _check("partly", missing=("--machine-type", "--cpu"), elsewhere=True),
            "⚠ `gcloud run deploy` — `--machine-type`, `--cpu` are in the cited pages, but "
            "not with this command",
        ),
        (
            _check("partly", missing=("gcloud run deploy",), elsewhere=True),
            "⚠ `gcloud run deploy` — not in the cited pages as written",
        ),
        (
            _check(
                "not_found",
                snippet="gcloud storage buckets create gs://my-bucket",
                missing=("storage", "buckets", "create"),
            ),
            "⚠ `gcloud storage buckets create` — not in the cited pages",
        ),
        (
            _check("not_found", snippet="curl -X POST https://e.com/v1", missing=("curl", "-X")),
            "⚠ `curl -X POST https://e.com/v1` — not in the cited pages",
        ),
        (
            _check(
                "not_found", kind="code", snippet="client.upload_frm(x)", missing=("upload_frm",)
            ),
            "⚠ `client.upload_frm(x)` — `upload_frm` is not in the cited pages",
        ),
        (
            _check("not_found", kind="flag", snippet="--dry-runn", missing=("--dry-runn",)),
            "⚠ `--dry-runn` — not in the cited pages",
        ),
        (
            _check("found", snippet="curl -X POST https://example.com/v1/x", uri="https://x/a"),
            "✓ `curl -X POST https://example.com/v1/x` — in source 1",
        ),
    ]
    assert [line for _, line in table] == [mark_lines([check])[0] for check, _ in table]


@given(
    st.text(alphabet=string.ascii_letters + " ", min_size=1, max_size=30).filter(str.strip),
    st.sampled_from(["", " | Cloud Run", " · Google Cloud", ": guide"]),
)
def test_a_mark_never_repeats_a_cited_page_s_title(name: str, site: str) -> None:
    """A section that is the page's name (its H1, the title before the site's name) is left
    out: the Sources list is where the page is named."""
    title = name.strip() + site
    sources = (Reference(name="documents/t", uri="https://x/t", title=title),)
    check = _check("found", uri="https://x/t", section=name, title=name.strip())
    verification = Verification(
        status="checked", snippets=(check.model_copy(update={"anchor": 2}),)
    )
    answer = Answer(
        query="q", kind="answer", text=BLOCK, references=sources, verification=verification
    )
    assert ["✓ `gcloud run deploy` — in source 1"] == _contexts(answer)


_COMMAND_WORDS = ["gcloud", "storage", "buckets", "create", "run", "deploy"]


@given(st.lists(st.sampled_from(_COMMAND_WORDS), min_size=1, max_size=4, unique=True))
def test_plain_words_of_a_command_are_never_named_as_missing(words: list[str]) -> None:
    """A command no page shows is itself the finding: its words are not listed as if they
    were flags (`storage`, `buckets`, `create` are not in the cited pages)."""
    snippet = "gcloud storage buckets create gs://b --location=US"
    for result in ("not_found", "partly"):
        check = _check(result, snippet=snippet, missing=tuple(words), elsewhere=True)
        [line] = mark_lines([check])
        named = re.findall(r"`([^`]*)`", line)
        assert ["gcloud storage buckets create"] == named


# three blocks; their last lines are 2, 6 and 10
_TEXT = "```\ngcloud a\n```\n\n```\ngcloud b\n```\n\n```\ngcloud c\n```"
_checks = st.builds(
    lambda snippet, result, missing, elsewhere, uri, section, anchor: _check(
        result,
        snippet=snippet,
        missing=missing if result != "found" else (),
        elsewhere=elsewhere,
        uri=uri,
        section=section,
        anchor=anchor,
    ),
    st.sampled_from(
        [
            "gcloud run deploy my-s --image i",
            "gcloud run deploy my-s --image i --service-acount a",
            "gcloud storage buckets create gs://b",
            "kubectl apply -f app.yaml",
            "npm install firebase",
        ]
    ),
    st.sampled_from(["found", "partly", "not_found"]),
    st.sampled_from([(), ("--service-acount",), ("storage", "buckets"), ("--cpu", "--x")]),
    st.booleans(),
    st.sampled_from(["https://x/a", "https://x/b", "https://elsewhere/c"]),
    st.sampled_from(["", "Deploy"]),
    st.sampled_from([2, 6, 10]),
)
_answers = st.lists(_checks, max_size=12).map(
    lambda checks: Answer(
        query="q",
        kind="answer",
        text=_TEXT,
        references=SOURCES,
        verification=Verification(status="checked", snippets=tuple(checks)),
    )
)


def _counted(lines: list[str]) -> tuple[int, int]:
    """(✓, ⚠) the mark lines say, a "…more" line counted as many as it says."""
    found = warned = 0
    for line in lines:
        more = dict((m, int(n)) for m, n in re.findall(r"([✓⚠]) (\d+) more", line))
        found += more.get("✓", 0) + (line.startswith("✓") and not more)
        warned += more.get("⚠", 0) + (line.startswith("⚠") and not more)
    return found, warned


def _marks(contexts: list[str]) -> list[str]:
    return [line for text in contexts for line in text.split("\n") if line[:1] in "✓⚠"]


@given(_answers)
def test_the_step_s_count_never_contradicts_the_marks(answer: Answer) -> None:
    """The stream's step output counts exactly the ✓ and ⚠ the answer shows, and the final
    message adds no count of its own."""
    marks = _marks(_contexts(answer))
    found, warned = _counted(marks)
    expected = None
    if found + warned:
        expected = f"{found} of {found + warned} found"
    assert expected == verify_summary(answer.verification, answer.references)
    assert not [text for text in _contexts(answer) if re.search(r"\d+ of \d+", text)]


@given(_answers)
def test_a_verdict_is_said_once_and_names_its_command(answer: Answer) -> None:
    """No verdict repeats anywhere in the message, and each names a command in code (a
    busy block's "✓ 2 more…" count is not a verdict: two blocks may each say one)."""
    marks = _marks(_contexts(answer))
    verdicts = [line for line in marks if not re.match(r"[✓⚠] \d+ more", line)]
    assert len(verdicts) == len(set(verdicts))
    assert all(re.match(r"[✓⚠] (`[^`]+` — |\d+ more)", line) for line in marks)


@given(_answers)
def test_a_failed_check_never_shows_as_complete(answer: Answer) -> None:
    """The check's step is complete only when every mark is a ✓."""
    _, warned = _counted(_marks(_contexts(answer)))
    assert ("error" if warned else "complete") == verify_status(
        answer.verification, answer.references
    )


@given(_answers)
def test_slack_the_stream_and_the_cli_say_the_same_verdicts(answer: Answer) -> None:
    """One wording for every surface: the message's context lines, the stream's blocks and
    the CLI's quoted lines (escaping aside)."""
    slack = _marks(_contexts(answer))
    parts = answer_parts(answer)
    streamed = streamed_answer(answer, parts).chunks
    stream = _marks(
        [
            e["text"]
            for c in streamed
            if c["type"] == "blocks"
            for b in c["blocks"]
            for e in b["elements"]
        ]
    )
    cli = [line[2:] for line in answer_markdown(answer).split("\n") if line[:3] in ("> ✓", "> ⚠")]
    assert slack == stream
    assert [line.replace("&amp;", "&") for line in slack] == cli


def test_past_four_verdicts_under_a_block_each_warning_is_said_and_the_rest_counted() -> None:
    """Six commands under one block, two of them ⚠: both ⚠ said, the ✓ past the limit
    counted in one line; the same ✓ twice is said once."""
    checks = [
        _check("found", snippet=f"gcloud run deploy my-s{i}", uri="https://x/a", section=f"S{i}")
        for i in (0, 0, 1, 2, 3)
    ]
    checks += [
        _check("partly", snippet="gcloud run deploy my-a --cpux 1", missing=("--cpux",)),
        _check("partly", snippet="gcloud run deploy my-b --memry 1", missing=("--memry",)),
    ]
    assert [
        "✓ `gcloud run deploy` — in source 1, under “S0”",
        "⚠ `gcloud run deploy` — `--cpux` is not in the cited pages",
        "⚠ `gcloud run deploy` — `--memry` is not in the cited pages",
        "✓ 3 more in the cited pages",
    ] == mark_lines(checks)


def test_an_answer_without_code_renders_as_if_never_checked() -> None:
    """No code: the same message with or without a check."""
    plain = Answer(query="q", kind="answer", text="Cloud Run scales to zero.")
    checked = plain.model_copy(update={"verification": Verification(status="checked")})
    assert render_answer(plain) == render_answer(checked)


def test_unchecked_says_so_once_and_marks_nothing() -> None:
    """Pages not fetched: one line, no ✓ or ⚠, and the step shows the check failed."""
    snippets = (_check("unchecked"),)
    verification = Verification(status="unchecked", snippets=snippets)
    answer = Answer(query="q", kind="answer", text=BLOCK, verification=verification)
    assert ["Commands not checked (the cited pages could not be fetched)"] == _contexts(answer)
    assert (None, "error") == (verify_summary(verification), verify_status(verification))


def test_many_marked_blocks_stay_within_slacks_budgets() -> None:
    """60 code blocks, each marked: the message is shortened within Slack's limits."""
    text = "\n\n".join(f"Step {i}:\n\n```\ngcloud run deploy s{i}\n```" for i in range(60))
    snippets = tuple(
        _check("not_found", snippet=f"gcloud x{i} {'y' * 70}", anchor=4 + 6 * i) for i in range(60)
    )
    answer = Answer(
        query="q",
        kind="answer",
        text=text,
        verification=Verification(status="checked", snippets=snippets),
    )
    msg = render_answer(answer, feedback_id="abc")
    assert len(msg["blocks"]) <= 50
    assert len(msg["text"]) + _chars_recursively(msg["blocks"]) <= 11_500
    assert "⚠ `gcloud x0 " in _contexts(answer)[0]


_hostile = st.sampled_from(["<!channel>", "<@U123>", "<https://evil|x>", "&lt;", "`", "*b*"])


@given(
    st.lists(_hostile, min_size=1, max_size=4), st.sampled_from(["found", "partly", "not_found"])
)
def test_page_and_answer_text_in_marks_is_inert(parts: list[str], result: str) -> None:
    """Whatever a page's section, or an answer's command, holds: no mention and no link."""
    hostile = " ".join(parts)
    check = _check(
        result,
        title=hostile,
        section=hostile,
        uri="https://x/a",
        missing=(hostile,),
        snippet=hostile,
    )
    for line in mark_lines([check]):
        assert "<!" not in line
        assert "<@" not in line
        assert "<http" not in line


def _chars_recursively(value: object) -> int:
    if isinstance(value, str):
        return len(value)
    if isinstance(value, dict):
        return sum(_chars_recursively(v) for v in value.values())
    if isinstance(value, list):
        return sum(_chars_recursively(v) for v in value)
    return 0
