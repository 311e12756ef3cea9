"""Checks and strategies shared by the tests of the Home tab, previews, feedback, sharing and
agent texts: Slack's rules from the fake Slack's own checks (one definition of "what Slack
refuses"), and hostile text.

(No tests in here; the name keeps it among the render test files.)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from hypothesis import strategies as st

from bot.errors import InvalidInput
from bot.render import Message
from tests.fakes.slack_checks import check_blocks, check_message, check_view
from tests.test_render_support import assert_no_live_markup, strings

_PIECES = [
    "<!channel>", "<!here>", "<!everyone>", "<@U123ABC>", "<@W1|x>", "<#C1|general>",
    "<!subteam^S1>", "<https://evil.example|google.com>", "<http://x.example>",
    "&lt;!channel&gt;", "&amp;", "&", "<", ">", "|", "*", "_", "`", "```", "\n", "\t", "\r",
    "\x00", "\x1b", "\x7f", "\u202e", "\u2066", "\ufeff", "😀", "中文", "é", "fb1:up:a1",
    "ask1:", "share1:", "https://docs.cloud.google.com/storage/docs/x", "  ",
]  # fmt: skip
#: text from people and documents, Slack markup and control characters mixed in
HOSTILE_TEXT = st.one_of(
    st.text(max_size=300),
    st.lists(st.one_of(st.sampled_from(_PIECES), st.text(max_size=12)), max_size=40).map("".join),
)
LONG_TEXT = st.text(min_size=2500, max_size=6000, alphabet=st.sampled_from("ab &<>|\n"))
T = TypeVar("T")


def near_values(*prefixes: str) -> st.SearchStrategy[str]:
    """Hostile text, often behind one of our button-value prefixes: near misses."""
    behind = st.tuples(st.sampled_from(prefixes), HOSTILE_TEXT).map("".join)
    return st.one_of(HOSTILE_TEXT, behind)


def assert_only_our_values(
    value: str, decode: Callable[[str], T], encode: Callable[[T], str]
) -> None:
    """`decode` refuses `value` (InvalidInput) or returns what `encode`s back to it exactly."""
    try:
        decoded = decode(value)
    except InvalidInput:
        return
    assert value == encode(decoded)


def _check_texts(value: object) -> None:
    """Every text object says something (Slack refuses empty or whitespace-only text)."""
    if isinstance(value, dict):
        if value.get("type") in ("plain_text", "mrkdwn"):
            assert str(value.get("text", "")).strip(), value
        for item in value.values():
            _check_texts(item)
    elif isinstance(value, list):
        for item in value:
            _check_texts(item)


def assert_valid_blocks(blocks: list[dict[str, Any]], *, max_blocks: int = 50) -> None:
    """Blocks Slack takes: slack_sdk validates every block and element, within the limits."""
    assert 1 <= len(blocks) <= max_blocks, len(blocks)
    assert check_blocks(blocks, max_blocks=max_blocks) is None, check_blocks(
        blocks, max_blocks=max_blocks
    )
    _check_texts(blocks)
    block_ids = [b["block_id"] for b in blocks if "block_id" in b]
    assert len(block_ids) == len(set(block_ids)), block_ids


def assert_valid_surface_message(message: Message) -> None:
    """A message (fallback text and blocks) Slack takes."""
    assert message["text"].strip()
    assert check_message(dict(message)) is None, check_message(dict(message))
    assert_valid_blocks(message["blocks"])


def assert_valid_view(view: dict[str, Any], kind: str) -> None:
    """A Home tab or modal view Slack takes (slack_sdk's View and every block in it)."""
    assert check_view(view, kinds=(kind,)) is None, check_view(view, kinds=(kind,))
    assert_valid_blocks(view["blocks"], max_blocks=100)


def assert_inert(blocks: list[dict[str, Any]], sources: Iterable[str], **kw: Any) -> None:
    """No markup the renderer did not make: no `<!…>`, no mention (but `asker`'s), no link to
    an address not in `sources`, every `&` one of our three entities."""
    assert_no_live_markup({"text": "·", "blocks": blocks}, sources, **kw)


def all_strings(value: object) -> str:
    return "\n".join(strings(value))
