"""How an answered question is counted: a generated answer, or search only and why.

Pure; shared by the bot (which counts each question as it answers it) and the report
(which reads the answer records back), so both say the same thing.
"""

from __future__ import annotations

from typing import Final

GENERATED: Final = "generated"
#: the reasons a question got search results only, in the order reports list them
SEARCH_WHY: Final = (
    "quota_minute",
    "quota_day",
    "quota_user",
    "quota_other",
    "keyword",
    "pay",
    "other",
)
WHY_WORDS: Final = {
    "quota_minute": "quota: minute",
    "quota_day": "quota: day",
    "quota_user": "per-person cap",
    "quota_other": "quota: other",
    "keyword": "keyword lookup",
    "pay": "Pay docs search",
    "other": "no answer tool",
}
REUSE_KINDS: Final = ("exact", "normalised", "shared")
_QUOTA = {"minute": "quota_minute", "day": "quota_day", "user": "quota_user"}


def classify(kind: str, fallback: str | None, route: str | None) -> str:
    """ "generated", or "search:<why>" for a search reply (see SEARCH_WHY).

    `kind` is what came back (answer, search, pay), `fallback` the record's fallback label
    ("answer_quota:day", "no_answer_tool", …), `route` the route the question took."""
    if kind == "answer":
        return GENERATED
    return "search:" + search_why(kind, fallback, route)


def search_why(kind: str, fallback: str | None, route: str | None) -> str:
    if fallback is not None and fallback.startswith("answer_quota:"):
        return _QUOTA.get(fallback.partition(":")[2], "quota_other")
    if fallback is not None:
        return "other"
    if kind == "pay" or route == "pay":
        return "pay"
    return "keyword"


def wanted_an_answer(route: str | None, fallback: str | None) -> bool:
    """True when the question was routed to a generated answer but got search only (a gap),
    as opposed to a keyword lookup, which asked for search."""
    return route == "answer" or (fallback is not None and fallback.startswith("answer_quota"))


def answered_counts(
    kind: str, fallback: str | None, route: str | None, reuse: str | None
) -> list[str]:
    """The per-day counter names one answered question adds to (besides `questions`)."""
    names = [classify(kind, fallback, route)]
    if reuse in REUSE_KINDS:
        names.append(f"reuse:{reuse}")
    return names
