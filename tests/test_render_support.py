"""Checks shared by the render tests: Slack's limits and "nobody can be pinged".

(No tests in here; the name keeps it among the render test files.)
"""

from __future__ import annotations

import html
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any
from urllib.parse import urljoin

from slack_sdk.models.blocks import Block

from bot.models import Answer, Document
from bot.render import Message, document_page_spans, render_answer, render_private_answer
from bot.text import strip_controls
from tests.fakes.slack_checks import check_block

MAX_MESSAGE_CHARS = 12_000
_TOKEN_RE = re.compile(r"<[^<>]*>")
_LINK_RE = re.compile(r"^<(?P<url>https?://[^|<>\s]+)\|(?P<label>[^|<>\n]*)>$")
_WORD_RE = re.compile(r"[A-Za-z0-9]+")


def strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def mrkdwn_texts(message: Message) -> list[str]:
    """Every string Slack parses as mrkdwn: the fallback text and mrkdwn text objects."""
    found = [message["text"]]

    def walk(value: object) -> None:
        if isinstance(value, dict):
            if value.get("type") == "mrkdwn":
                found.append(value["text"])
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(message["blocks"])
    return found


def _check_text_object(obj: dict[str, Any], limit: int) -> None:
    assert obj["type"] in ("plain_text", "mrkdwn")
    assert 1 <= len(obj["text"]) <= limit, (len(obj["text"]), obj["text"][:80])
    assert obj["text"].strip(), "empty text"


def assert_valid_message(message: Message) -> None:
    """What Slack would refuse: block schema (slack_sdk), counts and every length limit."""
    assert isinstance(message["text"], str)
    assert message["text"].strip(), "a message with blocks needs a fallback text"
    assert len(message["text"]) <= 3000
    blocks = message["blocks"]
    assert 1 <= len(blocks) <= 50, len(blocks)
    assert sum(len(s) for s in strings(blocks)) + len(message["text"]) <= MAX_MESSAGE_CHARS
    block_ids = [b["block_id"] for b in blocks if "block_id" in b]
    assert len(block_ids) == len(set(block_ids))
    for raw in blocks:
        parsed = Block.parse(raw)
        assert parsed is not None, raw
        parsed.validate_json()
        kind = raw["type"]
        if kind == "section":
            _check_text_object(raw["text"], 3000)
        elif kind == "header":
            _check_text_object(raw["text"], 150)
        elif kind == "context":
            assert 1 <= len(raw["elements"]) <= 10
            for element in raw["elements"]:
                _check_text_object(element, 3000)
        elif kind == "actions":
            _check_actions(raw)
        elif kind == "context_actions":  # the feedback buttons: what the fake Slack checks
            assert check_block(raw) is None, check_block(raw)
        else:
            assert kind == "divider", kind


def _check_actions(block: dict[str, Any]) -> None:
    elements = block["elements"]
    assert 1 <= len(elements) <= 25
    action_ids = [e["action_id"] for e in elements]
    assert len(action_ids) == len(set(action_ids)), "action ids must be unique in a block"
    for element in elements:
        assert len(element["action_id"]) <= 255
        if element["type"] == "button":
            _check_text_object(element["text"], 75)
            assert 1 <= len(element["value"]) <= 2000
        else:
            assert element["type"] in ("overflow", "static_select")
            limit = 5 if element["type"] == "overflow" else 100
            assert 1 <= len(element["options"]) <= limit
            for option in element["options"]:
                _check_text_object(option["text"], 75)
                assert 1 <= len(option["value"]) <= 150


def _unescape_url(url: str) -> str:
    return url.replace("%7C", "|").replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def allowed_urls(sources: Iterable[str], base_url: str | None = None) -> set[str]:
    """Every URL the input could legitimately link to: URLs written in it, and link targets
    resolved against the page they came from."""
    allowed: set[str] = set()
    for source in sources:
        allowed.update(re.findall(r"https?://[^\s<>()\[\]\"'`]+", source))
        for target in re.findall(r"\]\(<?([^()\s<>]*)", source):
            allowed.add(urljoin(base_url, target) if base_url else target)
        for attr in re.findall(r'href="([^"<>]*)"', source):
            allowed.add(urljoin(base_url, attr) if base_url else attr)
    return allowed


def assert_no_live_markup(
    message: Message,
    sources: Iterable[str],
    *,
    asker: str | None = None,
    base_url: str | None = None,
) -> None:
    """Only markup the renderer made: the asker's mention and links to URLs from the input.

    No `<!…>` (channel, here, subteam), no other `<@…>` or `<#…>`, no link to an address the
    input did not contain, no label that could end a link early, and every `&` starts one of
    the three entities we write (so an entity in the source cannot turn into markup).
    """
    sources = list(sources)
    allowed = allowed_urls(sources, base_url)
    # the renderer drops control and bidi-override characters, also inside link targets
    joined = strip_controls("\n".join(sources))
    for text in mrkdwn_texts(message):
        for token in _TOKEN_RE.findall(text):
            if asker is not None and token == f"<@{asker}>":
                continue
            match = _LINK_RE.match(token)
            assert match, f"live markup not made by the renderer: {token!r}"
            url = _unescape_url(match["url"])
            assert url in allowed or url in joined, f"link to {url!r} not in the input"
        rest = _TOKEN_RE.sub("", text)
        assert "<" not in rest, rest
        for line in rest.split("\n"):
            body = line[1:] if line.startswith(">") else line  # a quote marker we wrote
            assert ">" not in body, line
        assert not re.search(r"&(?!amp;|lt;|gt;)", text), text
        assert "<!" not in text
        assert "<#" not in text
        if asker is None:
            assert "<@" not in text


def visible_words(message: Message) -> Counter[str]:
    """Words a reader sees (mrkdwn entities decoded once, link URLs included)."""
    words: Counter[str] = Counter()
    for obj_text in _visible_strings(message):
        words.update(_WORD_RE.findall(html.unescape(obj_text)))
    return words


def _visible_strings(message: Message) -> list[str]:
    found: list[str] = []

    def walk(value: object) -> None:
        if isinstance(value, dict):
            if value.get("type") in ("mrkdwn", "plain_text"):
                found.append(value["text"])
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(message["blocks"])
    return found


def words_of(text: str) -> Counter[str]:
    return Counter(_WORD_RE.findall(text))


def non_space(text: str) -> str:
    return "".join(ch for ch in text if not ch.isspace())


def is_subsequence(needle: str, haystack: str) -> bool:
    it = iter(haystack)
    return all(ch in it for ch in needle)


def feedback_block_for(answer_id: str) -> dict[str, Any]:
    """The feedback block render_answer puts under an answer kept as `answer_id`."""
    return render_answer(Answer(query="q", kind="search"), feedback_id=answer_id)["blocks"][-1]


def encode_vote(answer_id: str, vote: str) -> str:
    """The value of the 👍 or 👎 button under an answer kept as `answer_id`."""
    element = feedback_block_for(answer_id)["elements"][0]
    return str(element["positive_button" if vote == "up" else "negative_button"]["value"])


def share_value(answer_id: str) -> str:
    """The value of the Share button under a private answer kept as `answer_id`."""
    private = render_private_answer({"text": "a", "blocks": []}, "q", answer_id)
    rows = [b for b in private["blocks"] if b["type"] == "actions"]
    return str(rows[0]["elements"][0]["value"])


def document_pages(doc: Document) -> list[str]:
    return [span.text(doc.content) for span in document_page_spans(doc)]
