"""The former inline renderer (one regex over the text), kept as the oracle the linear
scanner (`bot/render/_scan.py`) is compared with on short inputs: same output, exactly.

Its regex backtracks (a run of N backticks costs N³), so it is only ever given short text.
A frozen copy of bot/render/inline.py (now _inline.py) before the scanner; not for the bot.
"""

from __future__ import annotations

import re
from urllib.parse import urljoin

from bot.render import escape, is_http_url, link

_URL_PART = r"(?:<[^<>\n]*>|[^()\s]*(?:\([^()\s]*\)[^()\s]*)*)"
_TITLE_PART = r"(?:\s+(?:\"[^\"\n]*\"|'[^'\n]*'|\([^()\n]*\)))?"
_INLINE_RE = re.compile(
    r"(?P<code>(?P<ticks>`+)(?P<code_body>.{1,2000}?)(?<!`)(?P=ticks)(?!`))"
    r"|(?P<image>!\[(?P<img_alt>[^\]\n]*)\]\((?P<img_url>"
    + _URL_PART
    + r")"
    + _TITLE_PART
    + r"\s*\))"
    r"|(?P<link>\[(?P<link_label>(?:[^\[\]\n]|\[[^\[\]\n]*\])*)\]"
    r"\((?P<link_url>" + _URL_PART + r")" + _TITLE_PART + r"\s*\))"
    r"|(?P<autolink><(?P<auto_url>https?://[^\s<>|]+)>)"
    r"|(?P<comment><!--.{0,5000}?-->)"
    r"|(?P<ial>\{:[ \t]*[.#][^{}\n]{0,200}\})"
    r"|(?P<br><br\s*/?>)"
    r"|(?P<anchor><a\s[^<>]*?href=\"(?P<a_url>[^\"<>]*)\"[^<>]*>(?P<a_label>[^<>]*)</a>)"
    r"|(?P<html></?(?P<tag>[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*)(?:\s[^<>]*)?/?>)"
    r"|(?P<strong>(?<![\w*])\*\*(?=\S)(?P<strong_body>.{1,1000}?)(?<=\S)\*\*(?!\*)"
    r"|(?<!\w)__(?=\S)(?P<strong_body2>.{1,1000}?)(?<=\S)__(?!\w))"
    r"|(?P<em>(?<![\w*])\*(?=[^\s*])(?P<em_body>.{1,1000}?)(?<=[^\s*])\*(?![\w*])"
    r"|(?<!\w)_(?=[^\s_])(?P<em_body2>.{1,1000}?)(?<=[^\s_])_(?!\w))"
    r"|(?P<strike>~~(?=\S)(?P<strike_body>.{1,1000}?)(?<=\S)~~)"
    r"|(?P<escaped>\\(?P<esc_char>[!-/:-@\[-`{-~]))",
    re.DOTALL,
)
#: tags stripped (their text kept); any other `<word>` is shown literally, e.g. `List<String>`
_HTML_TAG_NAMES = (
    "a abbr article aside b big blockquote body caption center cite code col colgroup dd del "
    "details dfn div dl dt em figcaption figure font footer h1 h2 h3 h4 h5 h6 head header hr "
    "html i img ins kbd label li main mark nav ol p pre q s samp section small span strike "
    "strong sub summary sup table tbody td tfoot th thead tr tt u ul var wbr"
)
_HTML_TAGS = frozenset(_HTML_TAG_NAMES.split())
#: nesting of emphasis followed before the rest is shown as escaped text
_MAX_DEPTH = 6


def resolve_url(url: str, base_url: str | None) -> str:
    """A link target made absolute against the page it came from, when that is possible."""
    url = url.strip()
    if url.startswith("<") and url.endswith(">"):
        url = url[1:-1].strip()
    if base_url and not is_http_url(url) and is_http_url(base_url):
        scheme = url.split(":", 1)[0].lower() if ":" in url.split("/", 1)[0] else ""
        if not scheme:  # relative (`/x`, `x`, `#y`); never `javascript:`/`mailto:` and friends
            return urljoin(base_url, url)
    return url


def _is_stripped_tag(tag: str) -> bool:
    return tag.lower() in _HTML_TAGS or "-" in tag  # custom elements: devsite-selector, …


def inline_mrkdwn(text: str, base_url: str | None = None, *, plain_emphasis: bool = False) -> str:
    """Inline Markdown to mrkdwn; every piece of text is escaped.

    `plain_emphasis` drops emphasis markers instead of converting them (headings are bold
    already, and Slack does not nest `*…*`).
    """
    return _render(text, base_url, plain_emphasis, 0)


def _render(text: str, base_url: str | None, plain_emphasis: bool, depth: int) -> str:
    if depth > _MAX_DEPTH:
        return escape(text)
    out: list[str] = []
    pos = 0
    for match in _INLINE_RE.finditer(text):
        out.append(escape(text[pos : match.start()]))
        out.append(_convert(match, base_url, plain_emphasis, depth))
        pos = match.end()
    out.append(escape(text[pos:]))
    return "".join(out)


def _convert(match: re.Match[str], base_url: str | None, plain_emphasis: bool, depth: int) -> str:
    kind = match.lastgroup
    group = match.group

    def inner(body: str) -> str:
        return _render(body, base_url, plain_emphasis, depth + 1)

    def wrap(marker: str, body: str) -> str:
        rendered = inner(body)
        return rendered if plain_emphasis else f"{marker}{rendered}{marker}"

    if kind == "code":
        body = group("code_body")
        # Slack has no escape for a backtick inside `code`; a spaced body is still readable
        stripped = body.strip() if body.strip() else body
        return f"`{escape(stripped)}`"
    if kind == "image":
        alt = plain_text(group("img_alt"))
        return link(resolve_url(group("img_url"), base_url), alt or "image")
    if kind == "link":
        label = plain_text(group("link_label"))
        url = resolve_url(group("link_url"), base_url)
        return link(url, label) if label or is_http_url(url) else escape(group("link"))
    if kind == "autolink":
        return link(group("auto_url"))
    if kind == "anchor":
        return link(resolve_url(group("a_url"), base_url), plain_text(group("a_label")))
    if kind in ("comment", "ial"):  # an HTML comment, a kramdown `{: .external}` attribute
        return ""
    if kind == "br":
        return "\n"
    if kind == "html":
        return "" if _is_stripped_tag(group("tag")) else escape(group("html"))
    if kind == "strong":
        return wrap("*", group("strong_body") or group("strong_body2"))
    if kind == "em":
        return wrap("_", group("em_body") or group("em_body2"))
    if kind == "strike":
        return wrap("~", group("strike_body"))
    return escape(group("esc_char"))  # a backslash-escaped character, shown as itself


def plain_text(text: str) -> str:
    """Inline Markdown reduced to its readable text, NOT escaped (for plain_text fields,
    table cells laid out in code blocks, snippets and link labels)."""
    return _plain(text, 0)


def _plain(text: str, depth: int) -> str:
    if depth > _MAX_DEPTH:
        return text
    out: list[str] = []
    pos = 0
    for match in _INLINE_RE.finditer(text):
        out.append(text[pos : match.start()])
        out.append(_plain_piece(match, depth))
        pos = match.end()
    out.append(text[pos:])
    return "".join(out)


def _plain_piece(match: re.Match[str], depth: int) -> str:
    kind = match.lastgroup
    group = match.group
    if kind == "code":
        return group("code_body").strip() or group("code_body")
    if kind == "image":
        return _plain(group("img_alt"), depth + 1)
    if kind == "link":
        return _plain(group("link_label"), depth + 1) or group("link_url").strip("<>")
    if kind == "autolink":
        return group("auto_url")
    if kind == "anchor":
        return group("a_label")
    if kind in ("comment", "ial", "br"):
        return " " if kind == "br" else ""
    if kind == "html":
        return "" if _is_stripped_tag(group("tag")) else group("html")
    if kind == "escaped":
        return group("esc_char")
    for name in ("strong_body", "strong_body2", "em_body", "em_body2", "strike_body"):
        body = group(name)
        if body is not None:
            return _plain(body, depth + 1)
    return group(0)
