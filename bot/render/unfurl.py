"""Previews of links to Google's documentation (`link_shared` → `chat.unfurl`).

A link becomes a Developer Knowledge document name by the same rule as `doc <URL>`
(`documents/{host}{path}`), but only for the corpus hosts: anything else gets no preview, so
a pasted console or pricing link never costs an upstream call. The preview's "Show full doc"
button is the answer's own (`show_doc:0`, the name as its value), so the existing click
handler serves it.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from bot.names import is_valid_name
from bot.render.actions import ACTION_SHOW_DOC_PREFIX
from bot.render.blocks import SECTION_CHARS, Block, actions, button, section
from bot.render.escape import escape_truncated, is_http_url, link
from bot.text import strip_controls

#: the hosts the Developer Knowledge corpus covers (shared/reference/google-mcp.md)
CORPUS_HOSTS: frozenset[str] = frozenset(
    {
        "developer.android.com",
        "firebase.google.com",
        "docs.cloud.google.com",
        "cloud.google.com",
        "developer.chrome.com",
        "web.dev",
        "go.dev",
        "dart.dev",
        "docs.flutter.dev",
        "developers.google.com",
        "ai.google.dev",
        "tensorflow.org",
        "fuchsia.dev",
        "genkit.dev",
        "adk.dev",
        "geminicli.com",
        "antigravity.google",
        "docs.apigee.com",
        "developers.home.google.com",
        "mapsplatform.google.com",
        "knowledge.workspace.google.com",
    }
)
#: a preview's description is cut to this many characters (at a word)
DESCRIPTION_CHARS = 300
SHOW_DOC_LABEL = "Show full doc"
_DEFAULT_PORTS = {"http": 80, "https": 443}


def doc_name_for_url(url: str) -> str | None:
    """The document name of a link to a documentation page, or None for anything else.

    `https://docs.cloud.google.com/storage/docs/creating-buckets?hl=en#top` →
    `documents/docs.cloud.google.com/storage/docs/creating-buckets`. Slack's `<url|label>`
    and `<url>` forms are accepted; the query, fragment and trailing slash are dropped. None
    for another host, a site's front page, credentials or an unusual port in the URL, or a
    name the document-name rules refuse.
    """
    text = url.strip()
    if text.startswith("<") and text.endswith(">"):
        text = text[1:-1]
    text = text.split("|", 1)[0]
    if not is_http_url(text):
        return None
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        return None
    if parts.username is not None or parts.password is not None:
        return None
    if port is not None and port != _DEFAULT_PORTS.get(parts.scheme.lower()):
        return None
    host = (parts.hostname or "").rstrip(".")
    path = parts.path.rstrip("/")
    if host not in CORPUS_HOSTS or not path:
        return None
    name = f"documents/{host}{path}"
    return name if is_valid_name(name) else None


#: a title or description is read no further than this (a few times what is shown): the
#: rest of an oversized one is never cleaned up, escaped or cut at a word
_READ_CHARS = 8 * DESCRIPTION_CHARS


def _one_line(text: str) -> str:
    return " ".join(strip_controls(text[:_READ_CHARS]).split())


def render_unfurl(doc_title: str, description: str, url: str, name: str) -> dict[str, Any]:
    """One `unfurls[url]` entry of `chat.unfurl`: the page's title as a link to `url`, its
    description (escaped, cut at a word), and the answer's "Show full doc" button for `name`
    (left out when `name` is not a valid document name)."""
    title = f"*{link(url, _one_line(doc_title))}*"
    summary = escape_truncated(_one_line(description), DESCRIPTION_CHARS, at_word=True)
    text = f"{title}\n{summary}" if summary else title
    blocks: list[Block] = [section(text if len(text) <= SECTION_CHARS else title)]
    if is_valid_name(name):
        show = button(SHOW_DOC_LABEL, f"{ACTION_SHOW_DOC_PREFIX}0", name)
        blocks.append(actions([show], block_id="show_docs"))
    return {"blocks": blocks}
