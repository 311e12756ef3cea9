"""What a REST answer tells of its pages: when each last changed, and inline citation
markers. Each cited span gets its Sources number, `[1]`, at the end of the span's sentence:
never inside code, a table, a link, a word or an emoji, and never a new line (the verify
marks anchor on lines). Google counts spans in UTF-8 bytes, a str in characters: every
offset is converted first."""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from itertools import accumulate

from bot.models import Answer, Citation, Reference, SearchHit
from bot.render._convert import ATX_RE, FENCE_OPEN_RE, HR_RE, closes_fence
from bot.render._scan import scan
from bot.render._tables import is_delimiter_row
from bot.render._text import day_words, is_http_url

#: a sentence ends after one of these and a space (or at the end of its line)
_STOPS = frozenset(".!?…")
#: … or right after one of these: CJK puts no space between sentences
_WIDE_STOPS = frozenset("。！？")
#: what may close a sentence after its stop: brackets, quotes, emphasis
_CLOSERS = frozenset(")\"'”’»*_~")
#: stops inside a sentence
_ABBREVIATIONS = frozenset({"e.g.", "i.e.", "vs.", "cf."})
#: a quote's `>` marks: a fence inside a quote is code too
_QUOTE_RE = re.compile(r"^(?: {0,3}>[ ]?)+")
#: what opens a line before its words: quotes, a list item's marker and task box, a heading
_LEAD_RE = re.compile(
    r"(?:[ \t]*>[ ]?)*[ \t]*(?:(?:[-*+]|\d{1,9}[.)])[ \t]+(?:\[[ xX]\][ \t]+)?|#{1,6}[ \t]+)?"
)
#: a setext heading's underline: a marker on it would undo the heading
_UNDERLINE_RE = re.compile(r" {0,3}(?:=+|-+)[ \t]*")
#: an address a Markdown link holds as is (Google's pages have no spaces or brackets)
_LINKABLE_RE = re.compile(r"[^\s()<>\[\]]+")
#: where a marker goes, and the Sources numbers it shows (ascending, each once)
Place = tuple[int, tuple[int, ...]]
#: (number, the listed page's address) → the marker's text on one surface
Marker = Callable[[int, str], str]


def updated_words(updated: datetime | None) -> str | None:
    """ "updated 12 Oct 2026": the UTC day a page last changed (REST's `updateTime`; no
    guessing at the page's own zone); None when not known (MCP)."""
    if updated is None:
        return None
    return f"updated {day_words(updated, UTC)}"


def dated(page: Reference | SearchHit) -> str:
    """ " — updated 12 Oct 2026", said once after a page's title (a title may hold " · "); ""
    when not known."""
    words = updated_words(page.updated)
    return f" — {words}" if words else ""


def linkable(uri: str) -> bool:
    """A marker may link to `uri` in Markdown: a web address with nothing to escape."""
    return bool(_LINKABLE_RE.fullmatch(uri)) and is_http_url(uri)


def _utf8_len(char: str) -> int:
    code = ord(char)
    return 1 if code < 0x80 else 2 if code < 0x800 else 3 if code < 0x10000 else 4


def _char_spans(text: str, citations: Sequence[Citation]) -> Iterator[tuple[int, int, Citation]]:
    """Each citation's (start, end) in characters of `text`: a byte inside a character takes
    the whole character; a span past the text is cut to it, one wholly outside is dropped."""
    starts = list(accumulate(map(_utf8_len, text), initial=0))  # byte offset of each char
    total = starts[-1]
    for cited in citations:
        if cited.end < cited.start or cited.start >= total or cited.end <= 0:
            continue
        start = max(0, bisect_right(starts, max(cited.start, 0)) - 1)
        yield start, bisect_left(starts, min(cited.end, total)), cited


class _Layout:
    """The answer's lines, which are prose (a marker may end one), and its inline tokens."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]
        ends = [s - 1 for s in self.starts[1:]] + [len(text)]
        self.lines = list(zip(self.starts, ends, strict=True))
        self.prose = self._prose_lines()
        self.bounds = [self._bounds(i) for i in range(len(self.lines))]
        self.tokens: list[tuple[int, int]] = []
        for first, last in self._paragraphs():  # a code span may cross a paragraph's lines
            base = self.lines[first][0]
            body = text[base : self.lines[last][1]]
            self.tokens += [(base + t.start, base + t.end) for t in scan(body)]
        self.token_starts = [start for start, _ in self.tokens]

    def _prose_lines(self) -> list[bool]:
        """False for code (fences as the converter reads them), tables, rules, blank lines."""
        bodies = [_QUOTE_RE.sub("", self.text[s:e].rstrip("\r"), count=1) for s, e in self.lines]
        prose: list[bool] = []
        fence: str | None = None
        table = False
        for i, body in enumerate(bodies):
            if fence is not None:
                fence = None if closes_fence(body, fence) else fence
                prose.append(False)
                continue
            if opened := FENCE_OPEN_RE.match(body):
                fence, table = opened.group("fence"), False
            elif not body.strip():
                table = False
            elif not (table and "|" in body):
                following = bodies[i + 1] if i + 1 < len(bodies) else ""
                table = "|" in body and is_delimiter_row(following, body)
            words = not (fence or table or HR_RE.match(body) or _UNDERLINE_RE.fullmatch(body))
            prose.append(words and bool(body.strip()) and not opened)
        return prose

    def _bounds(self, i: int) -> tuple[int, int]:
        """(where line i's words start, where they end): after its lead, before trailing space
        and a hard break's backslash."""
        start, end = self.lines[i]
        lead = _LEAD_RE.match(self.text, start, end)
        first = lead.end() if lead else start
        last = start + len(self.text[start:end].rstrip().rstrip("\\").rstrip())
        heading = ATX_RE.match(self.text[start:end])
        if heading and heading.group("text") is not None:  # before a closing `#` run
            last = min(last, start + len(self.text[start:end].rstrip().rstrip("#").rstrip()))
        if last <= first and self.prose[i]:
            self.prose[i] = False  # a bare `-` or `#`: no words to end
        return first, last

    def _paragraphs(self) -> Iterator[tuple[int, int]]:
        first = None
        for i, prose in enumerate([*self.prose, False]):
            if prose and first is None:
                first = i
            elif not prose and first is not None:
                yield first, i - 1
                first = None

    def token_end(self, pos: int) -> int | None:
        """The end of the inline token (code, link, emphasis…) `pos` is strictly inside."""
        at = bisect_left(self.token_starts, pos) - 1
        if at >= 0 and self.tokens[at][1] > pos:
            return self.tokens[at][1]
        return None

    def line_of(self, pos: int) -> int:
        return bisect_right(self.starts, pos) - 1

    def place(self, end: int) -> int | None:
        """Where a span ending at `end` gets its marker: the end of its sentence; in code or
        a table, the end of the prose before it (after it when there is none before)."""
        found = self._sentence_end(end)
        if found is not None:
            return found
        line = self.line_of(self.token_end(end) or end)
        for i in range(line, -1, -1):
            if self.prose[i]:
                return self._line_end(i)
        for i in range(line, len(self.lines)):
            if self.prose[i]:
                return self._sentence_end(self.bounds[i][0])
        return None

    def _line_end(self, line: int) -> int:
        """After line `line`'s words, or after the token its last word is in."""
        last = self.bounds[line][1]
        inside = self.token_end(last)
        return inside if inside is not None and self.line_of(inside) == line else last

    def _sentence_end(self, pos: int) -> int | None:
        """The first sentence end at or after `pos`, on prose lines (None: not in prose)."""
        while True:
            pos = self.token_end(pos) or pos
            line = self.line_of(pos)
            if not self.prose[line]:
                return None
            first, last = self.bounds[line]
            at = max(pos, first)
            while at < last:
                if (skip := self.token_end(at)) is not None:
                    at = skip
                elif self._stops(at, first):
                    return at
                else:
                    at += 1
            inside = self.token_end(last)
            if inside is None or self.line_of(inside) == line:
                return self._line_end(line)
            pos = inside  # a code span runs on to the next line: its sentence goes on there

    def _stops(self, at: int, first: int) -> bool:
        """A sentence ends at `at` (never before the line's words, never inside a word)."""
        text = self.text
        stop = at
        while stop > first and text[stop - 1] in _CLOSERS:
            stop -= 1
        if stop <= first:
            return False
        if text[stop - 1] in _WIDE_STOPS and stop == at:
            return not _joins(text[at])
        if text[stop - 1] not in _STOPS | _WIDE_STOPS or text[at] not in " \t":
            return False
        if text[stop - 1] != ".":
            return True
        space = text.rfind(" ", first, stop)
        word = text[space + 1 if space >= 0 else first : stop].lower()
        return word not in _ABBREVIATIONS and not (len(word) == 2 and word[0].isalpha())


def _joins(char: str) -> bool:
    """A character that belongs to the one before it (a combining mark, ZWJ, a variation
    selector, a skin tone): a marker before it would split what is read as one."""
    code = ord(char)
    return (
        unicodedata.category(char) in ("Mn", "Mc", "Me")
        or code in (0x200D, 0xFE0E, 0xFE0F)
        or 0x1F3FB <= code <= 0x1F3FF
    )


def marker_places(
    text: str, citations: Sequence[Citation], numbers: Mapping[int, int]
) -> list[Place]:
    """Where each citation's marker goes in `text`, with the Sources numbers its references
    have (`numbers`: reference index → number; a reference not listed gets no marker)."""
    layout = _Layout(text)
    at: dict[int, set[int]] = {}
    for start, end, cited in _char_spans(text, citations):
        shown = {numbers[i] for i in cited.references if i in numbers}
        while end > start and text[end - 1].isspace():
            end -= 1  # a span's trailing space belongs to the next sentence
        place = layout.place(end) if shown else None
        if place is not None:
            at.setdefault(place, set()).update(shown)
    return [(place, tuple(sorted(shown))) for place, shown in sorted(at.items())]


def with_markers(text: str, places: Sequence[Place], marker: Callable[[int], str]) -> str:
    """`text` with `marker(number)` for each number at each place, in order."""
    out: list[str] = []
    done = 0
    for place, numbers in places:
        out += [text[done:place], *map(marker, numbers)]
        done = place
    return "".join(out) + text[done:]


def cited_text(answer: Answer, listed: Sequence[Reference | SearchHit], marker: Marker) -> str:
    """`answer.text` with its citations' markers, numbered as `listed` (the Sources list the
    reader sees: a reference is its page there, by address)."""
    if not answer.citations or answer.kind != "answer":
        return answer.text
    by_uri: dict[str, int] = {}
    for number, page in enumerate(listed, start=1):
        by_uri.setdefault(page.uri.strip(), number)
    numbers = {
        i: by_uri[ref.uri.strip()]
        for i, ref in enumerate(answer.references)
        if ref.uri.strip() in by_uri
    }
    places = marker_places(answer.text, answer.citations, numbers)
    uris = {number: uri for uri, number in by_uri.items()}
    return with_markers(answer.text, places, lambda n: marker(n, uris[n]))
