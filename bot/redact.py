"""The one redactor: configured secret values and anything shaped like a credential become
`[redacted]`. Logging and upstream error messages both use it, so the list of secret shapes
cannot drift apart.

Shapes: Slack tokens (`xox?-…`, `xapp-…`), Google API keys (`AIza…`), OAuth access tokens
(`ya29.…`) and refresh tokens (`1//…`), `Bearer …` credentials, PEM private keys, Slack
response URLs (anyone holding one may post into the channel for 30 minutes) and the password
in a `redis://` / `rediss://` URL. `redact_url` shows STATE_URL safely (log lines, start-up
errors, /readyz, `gdocs-bot check`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

REDACTED = "[redacted]"

# Linear in the text (it runs on every log line and upstream error): each shape is a fixed
# prefix then one greedy character class, so a failed attempt reads at most its minimum
# length and a match consumes what it read; `bearer`'s lookahead reads one token once; the
# PEM pattern's lazy body always matches (to its END line or the end), and no `[A-Z ]*` run
# can hold the `-----` that starts another attempt; a redis URL's parts stop at `/` and `@`.
#
# Token shapes worth hiding even when they are not ours (a pasted token in a question, a
# token echoed by a server). Each needs enough characters after its prefix that prose like
# "a token starting with xoxb-" stays readable.
#
# Each shape comes with the literal prefix every match of it begins with (a regex, here
# beside its pattern so that the two cannot drift apart): a text holding none of the
# prefixes holds no token shape, and the substitutions are skipped (one search instead of
# nine: most log lines hold none).
_SHAPES: tuple[tuple[str, re.Pattern[str], str], ...] = (
    ("xox", re.compile(r"xox[a-z]?[.-][A-Za-z0-9.-]{8,}"), REDACTED),
    ("xapp-", re.compile(r"xapp-[A-Za-z0-9-]{8,}"), REDACTED),
    ("AIza", re.compile(r"AIza[0-9A-Za-z_-]{20,}"), REDACTED),
    (r"ya29\.", re.compile(r"ya29\.[0-9A-Za-z_.~+/=-]+"), REDACTED),
    ("1//0", re.compile(r"\b1//0[0-9A-Za-z_-]{20,}"), REDACTED),
    # a credential has a digit or punctuation in it: "the bearer of bad news" stays
    (
        "(?i:bearer)",
        re.compile(r"(?i)\b(bearer)\s+(?=[A-Za-z0-9._~+/=-]*[0-9._~+/=-])[A-Za-z0-9._~+/=-]{6,}"),
        r"\1 " + REDACTED,
    ),
    (
        "-----BEGIN ",
        re.compile(
            r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)",
            re.DOTALL,
        ),
        REDACTED,
    ),
    (
        r"https://hooks\.slack\.com/",
        re.compile(
            r"(https://hooks\.slack\.com/)(?:commands|actions|services|triggers)/[^\s\"'<>|]+"
        ),
        r"\1" + REDACTED,
    ),
    (
        "(?i:rediss?://)",
        re.compile(r"(?i)(rediss?://[^:@/\s]*:)[^@\s/]+@"),
        r"\1" + REDACTED + "@",
    ),
)
SECRET_SHAPES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (pattern, replacement) for _, pattern, replacement in _SHAPES
)
_SHAPE_STARTS = re.compile("|".join(prefix for prefix, _, _ in _SHAPES))

#: configured secrets shorter than this are not searched for (they would match prose)
MIN_SECRET_CHARS = 6


class Redactor:
    """Replaces secret values and token-shaped strings with `[redacted]`.

    `secrets` are fixed values (tokens from the settings); `current` is asked on every call
    for values that change (OAuth access tokens).
    """

    def __init__(
        self,
        secrets: Iterable[str] = (),
        *,
        current: Callable[[], Iterable[str]] | None = None,
        min_chars: int = MIN_SECRET_CHARS,
    ) -> None:
        # `min_chars`=1 where every value is a secret (a store password), never prose
        self._min = min_chars
        self._fixed = _longest_first(secrets, min_chars)
        self._current = current

    def __call__(self, text: str) -> str:
        secrets = self._fixed
        if self._current is not None:
            secrets = _longest_first([*secrets, *self._current()], self._min)
        for secret in secrets:
            if secret in text:
                text = text.replace(secret, REDACTED)
        if _SHAPE_STARTS.search(text) is None:
            return text
        for pattern, replacement in SECRET_SHAPES:
            text = pattern.sub(replacement, text)
        return text

    def value(self, value: object) -> object:
        """Redact strings inside `value` (containers included); other values pass through."""
        if isinstance(value, str):
            return self(value)
        if isinstance(value, bytes | bytearray):
            return self(bytes(value).decode("utf-8", "replace"))
        if isinstance(value, dict):
            return {key: self.value(item) for key, item in value.items()}
        if isinstance(value, list | tuple | set | frozenset):
            return [self.value(item) for item in value]
        if value is None or isinstance(value, bool | int | float):
            return value
        # an object whose str() might carry a secret (an exception, a URL, a model)
        return self(str(value))


def _longest_first(secrets: Iterable[str], min_chars: int) -> list[str]:
    # longest first, so a secret containing another is replaced whole
    return sorted({s for s in secrets if len(s) >= min_chars}, key=len, reverse=True)


def redact_url(url: str) -> str:
    """`url` safe to log: any password (or a lone user part, which may be one) redacted.

    redact_url("redis://:s3cret@cache:6379/0") == "redis://:[redacted]@cache:6379/0"
    """
    scheme, sep, rest = url.partition("://")
    if not sep:
        return re.sub(r"[^@/]*@", REDACTED + "@", url, count=1)
    authority, slash, tail = rest.partition("/")
    if "@" in authority:
        userinfo, _, host = authority.rpartition("@")
        user, colon, _password = userinfo.partition(":")
        authority = f"{user}:{REDACTED}@{host}" if colon else f"{REDACTED}@{host}"
    tail = re.sub(r"(?i)(password=)[^&]*", r"\1" + REDACTED, tail)
    return f"{scheme}://{authority}{slash}{tail}"
