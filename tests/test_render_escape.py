"""escape(), link() and mention(): the only ways text and markup reach Slack."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from bot.render import escape, is_http_url, link, mention, task_text
from bot.text import truncate


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("plain text", "plain text"),
        ("a & b", "a &amp; b"),
        ("<!channel>", "&lt;!channel&gt;"),
        ("<@U123>", "&lt;@U123&gt;"),
        ("<#C1|general>", "&lt;#C1|general&gt;"),
        ("<!subteam^S1>", "&lt;!subteam^S1&gt;"),
        ("<https://evil|google.com>", "&lt;https://evil|google.com&gt;"),
        ("&lt;!channel&gt;", "&amp;lt;!channel&amp;gt;"),
        ("nul\x00byte\x07bell\x1besc\x7fdel", "nulbytebellescdel"),
        ("keeps\ttabs\nand newlines", "keeps\ttabs\nand newlines"),
        ("carriage\rreturn", "carriagereturn"),
        ("*bold* _it_ `code`", "*bold* _it_ `code`"),
        ("שלום 👩‍💻 中文", "שלום 👩‍💻 中文"),
        # bidi overrides/isolates reorder what the reader sees ("Trojan Source"): dropped
        ("admin\u202egnp.exe", "admingnp.exe"),
        ("a\u2066b\u2069c\u202ad\u202ce", "abcde"),
        ("RTL marks stay: \u200fשלום\u200e", "RTL marks stay: \u200fשלום\u200e"),
    ],
)
def test_escape_neutralises_exactly_amp_lt_gt_and_controls(text: str, expected: str) -> None:
    """Only &, < and > are escaped (& first); control characters other than tab and newline go."""
    assert expected == escape(text)


@pytest.mark.parametrize(
    ("url", "label", "expected"),
    [
        (
            "https://cloud.google.com/storage",
            "Storage",
            "<https://cloud.google.com/storage|Storage>",
        ),
        ("http://example.com/a?b=1&c=2", "q", "<http://example.com/a?b=1&amp;c=2|q>"),
        ("https://x.example/<a>|b", "x", "<https://x.example/&lt;a&gt;%7Cb|x>"),
        ("https://x.example/", "a|b", "<https://x.example/|a¦b>"),
        ("https://x.example/", "<!channel> & co", "<https://x.example/|&lt;!channel&gt; &amp; co>"),
        ("https://x.example/", "two\nlines", "<https://x.example/|two lines>"),
        ("https://x.example/p", "", "<https://x.example/p|x.example/p>"),
        ("https://x.example/p", None, "<https://x.example/p|x.example/p>"),
        ("  https://x.example/p  ", "padded", "<https://x.example/p|padded>"),
    ],
)
def test_link_builds_escaped_slack_links_for_http_urls(
    url: str, label: str | None, expected: str
) -> None:
    """An http(s) URL becomes `<url|label>` with the URL and label made inert."""
    assert expected == link(url, label)


@pytest.mark.parametrize(
    ("url", "label", "expected"),
    [
        ("javascript:alert(1)", "click", "click"),
        ("mailto:a@example.com", "mail us", "mail us"),
        ("/storage/docs/x", "relative", "relative"),
        ("ftp://x.example/f", "", "ftp://x.example/f"),
        ("https://", "no host", "no host"),
        ("https://x.example/a b", "space", "space"),
        ("https://x.example/\x00", "<nul>", "&lt;nul&gt;"),
        ("https://[::1", "bad ipv6", "bad ipv6"),
        ("https://x.example/" + "a" * 2000, "very long url", "very long url"),
    ],
)
def test_link_falls_back_to_escaped_text_for_anything_else(
    url: str, label: str, expected: str
) -> None:
    """Non-http(s), malformed or huge URLs are never linked; the label is shown as text."""
    assert expected == link(url, label)


@pytest.mark.parametrize(
    ("url", "label", "expected"),
    [
        ("https://evil.example/x", "google.com", "<https://evil.example/x|evil.example/x>"),
        (
            "https://evil.example/",
            "https://cloud.google.com/",
            "<https://evil.example/|evil.example/>",
        ),
        ("https://cloud.google.com/x", "google.com", "<https://cloud.google.com/x|google.com>"),
        (
            "https://cloud.google.com/x",
            "cloud.google.com/x",
            "<https://cloud.google.com/x|cloud.google.com/x>",
        ),
        (
            "https://evil.example/",
            "Read google.com docs",
            "<https://evil.example/|Read google.com docs>",
        ),
    ],
)
def test_link_label_that_names_another_host_shows_the_real_address(
    url: str, label: str, expected: str
) -> None:
    """`[google.com](https://evil.example)` cannot pose as Google: the real host is shown."""
    assert expected == link(url, label)


def test_link_with_a_huge_label_shows_it_as_text_then_a_short_link() -> None:
    """A label too long for one link stays readable, followed by the link itself."""
    label = "word " * 400
    rendered = link("https://x.example/p", label)
    assert rendered.endswith(" (<https://x.example/p|x.example/p>)")
    assert rendered.startswith("word word")


@pytest.mark.parametrize(
    ("user_id", "expected"),
    [
        ("U123ABC", "<@U123ABC>"),
        ("W0123456789", "<@W0123456789>"),
        ("UAB", "<@UAB>"),
        ("U1", ""),
        ("u123abc", ""),
        ("C123ABC", ""),
        ("U123>|<!channel", ""),
        ("!channel", ""),
        ("U" + "A" * 21, ""),
        ("", ""),
    ],
)
def test_mention_only_for_well_formed_user_ids(user_id: str, expected: str) -> None:
    """A user id that is not `U…`/`W…` is never echoed into markup."""
    assert expected == mention(user_id)


@pytest.mark.parametrize(
    ("text", "limit", "at_word", "expected"),
    [
        ("short", 10, False, "short"),
        ("exactly10!", 10, False, "exactly10!"),
        ("abcdefghijkl", 10, False, "abcdefghi…"),
        ("many small words here", 12, True, "many small…"),
        ("unbrokenwordthatislong", 10, True, "unbrokenw…"),
    ],
)
def test_truncate_marks_cut_text_with_an_ellipsis(
    text: str, limit: int, at_word: bool, expected: str
) -> None:
    """Cut text ends in "…" and never exceeds the limit."""
    assert expected == truncate(text, limit, at_word=at_word)


def test_escape_truncated_never_cuts_an_entity_in_half() -> None:
    """Text is cut before escaping, so the result fits and ends on whole entities."""
    shown = task_text("&" * 1000)  # a streamed step's title: at most 256 characters
    assert len(shown) <= 256
    assert shown.endswith("&amp;…")
    assert shown.replace("&amp;", "").replace("…", "") == ""


def _http_url_char_by_char(url: str) -> bool:
    """The URL rule read one character at a time (the reference for the one search)."""
    if not url or any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in url):
        return False
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        return False
    return parts.scheme.lower() in ("http", "https") and bool(host)


_URL_PIECES = st.sampled_from(
    ["https://", "http://", "ftp://", "docs.cloud.google.com", "/a", "?q=1", "[::1]", "é"]
)
#: Unicode spaces (no-break, line separator, ideographic, NEL), C0 controls, DEL
_NOT_URL_PIECES = st.sampled_from(["\u00a0", "\u2028", "\u3000", "\x85", "\x1c", "\x7f", "\t", " "])


@given(
    st.one_of(
        st.text(max_size=40),
        st.lists(st.one_of(_URL_PIECES, _NOT_URL_PIECES), max_size=6).map("".join),
    )
)
@example("https://docs.cloud.google.com/a\u00a0b")
@example("https://docs.cloud.google.com\u2028/a")
@example("https://docs.cloud.google.com/\x85")
def test_a_url_with_any_space_or_control_is_never_a_link(url: str) -> None:
    """Unicode spaces (no-break, line separator, ideographic), C0 controls and DEL all make
    the text no URL, exactly as a test of each character does."""
    assert is_http_url(url) == _http_url_char_by_char(url)
