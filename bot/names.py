"""Developer Knowledge document names: what a valid one is, and one from a URL a user typed."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from bot.errors import ErrorFacts, InvalidInput, Reason

MAX_NAME_CHARS = 500
MAX_NAMES_PER_CALL = 20

# host, then an optional path of safe URL characters. Bounded backtracking: labels split at
# dots, and a name over MAX_NAME_CHARS is refused before the regex runs.
_NAME_RE = re.compile(
    r"^documents/"
    r"(?P<host>[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+)"
    r"(?P<path>/[A-Za-z0-9._~!$'()*+,;=:@%/-]*)?\Z"
)


def uri_for_name(name: str) -> str:
    """`documents/docs.cloud.google.com/x` -> `https://docs.cloud.google.com/x`."""
    return "https://" + name.removeprefix("documents/")


def is_valid_name(name: str) -> bool:
    return (
        len(name) <= MAX_NAME_CHARS
        and ".." not in name
        and "//" not in name.removeprefix("documents/")
        and _NAME_RE.match(name) is not None
    )


def normalize_doc_ref(ref: str) -> str:
    """A document name from a name or an https URL typed by a user; InvalidInput otherwise."""
    text = ref.strip().strip("<>")
    if "|" in text:  # Slack auto-links URLs as <https://x|x>
        text = text.split("|", 1)[0]
    if text.startswith(("https://", "http://")):
        parts = urlsplit(text)
        path = parts.path.rstrip("/")
        name = f"documents/{(parts.hostname or '').lower()}{path}"
    else:
        name = text.rstrip("/")
    if not is_valid_name(name):
        raise InvalidInput(facts=ErrorFacts(Reason.NOT_A_PAGE))
    return name
