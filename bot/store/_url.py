"""STATE_URL shown safely: for log lines, start-up errors and /readyz."""

from __future__ import annotations

import re


def describe_url(url: str) -> str:
    """`url` safe to log: any password (or a lone user part, which may be one) becomes `***`.

    describe_url("redis://:s3cret@cache:6379/0") == "redis://:***@cache:6379/0"
    """
    scheme, sep, rest = url.partition("://")
    if not sep:
        return re.sub(r"[^@/]*@", "***@", url, count=1)
    authority, slash, tail = rest.partition("/")
    if "@" in authority:
        userinfo, _, host = authority.rpartition("@")
        user, colon, _password = userinfo.partition(":")
        authority = f"{user}:***@{host}" if colon else f"***@{host}"
    tail = re.sub(r"(?i)(password=)[^&]*", r"\1***", tail)
    return f"{scheme}://{authority}{slash}{tail}"
