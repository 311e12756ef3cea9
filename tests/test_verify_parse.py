"""Extraction and matching rules of the verified-answers check, table by table."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.models import Document
from bot.verify import check_answer, count_commands
from bot.verify.parse import is_placeholder, logical_lines, shell_commands, value_ok


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        (["$ gcloud run deploy \\", "  --image X"], ["gcloud run deploy --image X"]),
        (["> kubectl get pods"], ["kubectl get pods"]),
        (["# a comment", "gcloud info  # trailing"], ["gcloud info"]),
        (["(venv) $ pip install flask"], ["pip install flask"]),
        (["Created service [hello]."], ["Created service [hello]."]),
    ],
)
def test_shell_lines_lose_prompts_comments_and_continuations(
    lines: list[str], expected: list[str]
) -> None:
    """A block's lines become the commands a reader would type."""
    assert list(logical_lines(lines)) == expected


@pytest.mark.parametrize(
    ("line", "programs"),
    [
        ("npm install -g firebase-tools && firebase login", ["npm", "firebase"]),
        ('echo -n "x" | gcloud secrets create s --data-file=-', ["gcloud"]),
        ("Created service [hello].", []),
        ("sudo PROJECT=x gcloud config set project x", ["gcloud"]),
        ("./my-tool --verbose run", ["my-tool"]),
    ],
)
def test_a_line_holds_one_command_per_known_cli_or_flagged_program(
    line: str, programs: list[str]
) -> None:
    """Pipes and && split a line; output lines without a CLI or --flags are no commands."""
    assert [c.program for c in shell_commands(line)] == programs


@pytest.mark.parametrize(
    ("answer", "page", "ok"),
    [
        ("my-project", "PROJECT_ID", True),
        ("gs://example-bucket", "gs://BUCKET_NAME", True),
        ("NAME", "<name>", True),
        ("us-central1", "REGION", True),
        ("projects/p1/locations/us-east1/x", "projects/PROJECT_ID/locations/REGION/x", True),
        ("projects/p1/regions/us-east1/x", "projects/PROJECT_ID/locations/REGION/x", False),
        ("deploy", "delete", False),
        ("/sdcard/notes.txt", "/sdcard/foo.txt", False),
    ],
)
def test_placeholders_stand_for_values_but_not_for_structure(
    answer: str, page: str, ok: bool
) -> None:
    """Values a reader replaces match anything; literal path segments must be the same."""
    assert value_ok(answer, page) is ok


def test_placeholder_words_are_told_from_subcommands() -> None:
    """`PROJECT_ID`, `<name>`, `my-app` are placeholders; `deploy` and `--image` are not."""
    assert all(is_placeholder(t) for t in ["PROJECT_ID", "<name>", "${REGION}", "my-app"])
    assert not any(is_placeholder(t) for t in ["deploy", "--image", "buckets"])


def test_yaml_and_prose_are_not_checked() -> None:
    """Configuration blocks and inline names are no commands: nothing to mark."""
    answer = "Set `PROJECT_ID`.\n\n```yaml\nkind: Deployment\n```\n"
    assert count_commands(answer) == 0
    assert check_answer(answer, []).snippets == ()


def test_no_pages_means_nothing_is_found() -> None:
    """With no cited page every command is 'not found' (never found by default)."""
    (check,) = check_answer("```\ngcloud run deploy x --image y\n```", []).snippets
    assert check.result == "not_found"


_PAGE = Document(
    name="documents/x", uri="https://x", title="X", content="# X\n```\ngcloud a b\n```"
)


@given(st.text(max_size=400))
def test_any_text_is_checked_without_error(text: str) -> None:
    """Whatever an answer holds, the check gives one result per counted snippet."""
    result = check_answer(text, [_PAGE])
    assert len(result.snippets) == count_commands(text)
    assert all(s.result in ("found", "partly", "not_found") for s in result.snippets)


def test_a_long_fence_line_and_a_long_blank_run_are_read_in_linear_time() -> None:
    """Catastrophe guard (the former patterns took ~40 s on these 100 kB lines): 2 s."""
    import time

    from bot.verify.parse import fences

    started = time.perf_counter()
    assert [] == fences("\n```" + "a" * 100_000 + "`")  # a backtick after: no fence
    assert ["gcloud run" + " " * 100_000 + "x"] == list(
        logical_lines(["gcloud run" + " " * 100_000 + "x"])
    )
    assert ["gcloud run deploy"] == list(
        logical_lines(["gcloud run deploy" + " " * 50_000 + "# x"])
    )
    assert time.perf_counter() - started < 2.0
