"""The one redactor, for logs and upstream error messages alike: configured secret values and
anything shaped like a credential become `[redacted]`."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

REDACTED = "[redacted]"

# Linear in the text (it runs on every log line): each shape is a fixed prefix then one
# greedy class; the PEM body's lazy match always ends. Each needs enough characters after its
# prefix that prose like "a token starting with xoxb-" stays readable. The prefix beside each
# pattern lets one search skip the substitutions for the many lines holding none.
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
    """`secrets` are fixed values (tokens from the settings); `current` is asked on every
    call for values that change (OAuth access tokens)."""

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
    """`url` with any password (or a lone user part, which may be one) redacted."""
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
