"""Inline Markdown to mrkdwn or plain text, from one linear left-to-right scan (`scan`):
text between constructs is escaped, and only `link()` may produce `<…>` markup."""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import urljoin

from bot.render._scan import Token, scan
from bot.render._text import escape, is_http_url, link

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
    """A relative link target made absolute against the page it came from."""
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
    """Inline Markdown to escaped mrkdwn; `plain_emphasis` drops emphasis (in headings)."""
    return _render(text, base_url, plain_emphasis, 0)


def _walk(text: str, piece: Callable[[Token], str], between: Callable[[str], str]) -> str:
    out: list[str] = []
    pos = 0
    for token in scan(text):
        out += [between(text[pos : token.start]), piece(token)]
        pos = token.end
    return "".join(out) + between(text[pos:])


def _render(text: str, base_url: str | None, plain_emphasis: bool, depth: int) -> str:
    if depth > _MAX_DEPTH:
        return escape(text)
    return _walk(text, lambda t: _convert(text, t, base_url, plain_emphasis, depth), escape)


def _convert(
    text: str, token: Token, base_url: str | None, plain_emphasis: bool, depth: int
) -> str:
    kind = token.kind

    if kind == "code":  # Slack has no escape for a backtick inside `code`
        return f"`{escape(token.a.strip() or token.a)}`"
    if kind == "image":
        return link(resolve_url(token.b, base_url), plain_text(token.a) or "image")
    if kind == "link":
        label = plain_text(token.a)
        url = resolve_url(token.b, base_url)
        if label or is_http_url(url):
            return link(url, label)
        return escape(text[token.start : token.end])
    if kind == "autolink":
        return link(token.a)
    if kind == "anchor":
        return link(resolve_url(token.a, base_url), plain_text(token.b))
    if kind in ("comment", "ial"):  # an HTML comment, a kramdown `{: .external}` attribute
        return ""
    if kind == "br":
        return "\n"
    if kind == "html":
        return "" if _is_stripped_tag(token.a) else escape(text[token.start : token.end])
    if kind in ("strong", "em", "strike"):
        inner = _render(token.a, base_url, plain_emphasis, depth + 1)
        marker = "" if plain_emphasis else {"strong": "*", "em": "_", "strike": "~"}[kind]
        return f"{marker}{inner}{marker}"
    return escape(token.a)  # a backslash-escaped character, shown as itself


def plain_text(text: str) -> str:
    """Inline Markdown reduced to its readable text, NOT escaped."""
    return _plain(text, 0)


def _plain(text: str, depth: int) -> str:
    return text if depth > _MAX_DEPTH else _walk(text, lambda t: _piece(text, t, depth), str)


def _piece(text: str, token: Token, depth: int) -> str:
    kind = token.kind
    if kind == "code":
        return token.a.strip() or token.a
    if kind == "image":
        return _plain(token.a, depth + 1)
    if kind == "link":
        return _plain(token.a, depth + 1) or token.b.strip("<>")
    if kind in ("autolink", "escaped"):
        return token.a
    if kind == "anchor":
        return token.b
    if kind in ("comment", "ial", "br"):
        return " " if kind == "br" else ""
    if kind == "html":
        return "" if _is_stripped_tag(token.a) else text[token.start : token.end]
    return _plain(token.a, depth + 1)  # strong, em, strike
