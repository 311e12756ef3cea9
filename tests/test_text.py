"""The one text-safety module: what is dropped from untrusted text, and what stays."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.errors import InvalidInput
from bot.render import error_sentence
from bot.text import (
    clean_language,
    clean_query,
    is_language_tag,
    one_line,
    strip_controls,
    terminal_safe,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("  How do I?  ", "How do I?"),
        ("a\x00b", "ab"),
        ("tab\there", "tab here"),
        ("line\nbreak", "line\nbreak"),
        ("bidi\u202eoverride", "bidioverride"),
        ("zero\u200bwidth", "zerowidth"),
        ("naïve café 日本", "naïve café 日本"),
    ],
)
def test_clean_query_keeps_text_and_drops_control_characters(text: str, expected: str) -> None:
    """Control and invisible format characters go; letters of every script stay."""
    assert expected == clean_query(text, 100)


def test_clean_query_refuses_over_the_limit_naming_it() -> None:
    """The limit is in the message."""
    with pytest.raises(InvalidInput) as caught:
        clean_query("x" * 11, 10)
    assert re.search("under 10 characters", error_sentence(caught.value))


@pytest.mark.parametrize(
    ("tag", "expected"),
    [("it-IT", "it-IT"), ("pt_BR", "pt-BR"), ("en", "en"), (None, None), ("  ", None)],
)
def test_clean_language_accepts_bcp47_tags(tag: str | None, expected: str | None) -> None:
    """BCP-47 tags pass (underscores mended); nothing means no language."""
    assert expected == clean_language(tag)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("bell\x07 and NUL\x00", "bell and NUL"),
        ("keep\ttab\nand newline", "keep\ttab\nand newline"),
        ("rtl\u202eoverride\u2066isolate", "rtloverrideisolate"),
        ("mark\u200estays", "mark\u200estays"),  # LRM: RTL text needs it
        ("emoji\u200djoiner", "emoji\u200djoiner"),
    ],
)
def test_strip_controls_drops_controls_and_bidi_overrides_only(text: str, expected: str) -> None:
    """C0 controls, DEL and bidi overrides go; tab, newline, LRM and joiners stay."""
    assert expected == strip_controls(text)


def test_one_line_flattens_and_cuts() -> None:
    """All whitespace runs become one space; a limit cuts with an ellipsis."""
    assert "a b c" == one_line("  a\n\tb \x08 c ")
    assert "abcd…" == one_line("abcdefgh", 5)


def test_terminal_safe_removes_escape_sequences() -> None:
    """No escape sequence from a document reaches the terminal; newlines stay."""
    assert "[31mred\nline" == terminal_safe("\x1b[31mred\nline")


@given(st.text())
def test_one_line_is_one_printable_line(text: str) -> None:
    """Whatever comes in, one_line gives no line breaks and no control characters."""
    flat = one_line(text)
    assert "\n" not in flat
    assert strip_controls(flat) == flat


@pytest.mark.parametrize(
    ("tag", "ok"),
    [
        ("it-IT", True),
        ("zh-Hant-TW", True),
        ("es-419", True),
        ("../../etc", False),
        ("it_IT", False),
        ("x" * 40, False),
        ("", False),
    ],
)
def test_language_tags_are_bcp47_shaped(tag: str, ok: bool) -> None:
    """One rule for Slack locales and Pay's languageCode."""
    assert ok == is_language_tag(tag)


@given(st.text(), st.sampled_from(["", "\n", "\n\t"]))
def test_without_invisible_drops_exactly_control_and_format_characters(
    text: str, keep: str
) -> None:
    """Whatever the text (ASCII or not), what goes is every control or format character
    not kept, and nothing else."""
    import unicodedata

    from bot.text import without_invisible

    expected = "".join(c for c in text if c in keep or unicodedata.category(c) not in ("Cc", "Cf"))
    assert expected == without_invisible(text, keep=keep)
    assert "plain ASCII question?" == without_invisible("plain ASCII question?")
