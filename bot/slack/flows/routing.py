"""Which server a Slack text goes to (pure): answer_query is scarce, so only real questions
use it (a question mark, a question word, or enough words); keywords go to search, Pay /
Wallet topics to Pay; `search`, `pay`, `doc` force a route; empty or `help`: the usage.
`in:PRODUCT` words among the first limit a question or search to products."""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from bot.channels import ChannelSettings
from bot.models import Scope
from bot.products import ScopeError, scope_of
from bot.text import clean_text

RouteKind = Literal["help", "answer", "search", "pay", "doc", "quota", "report", "team"]
ScopeFrom = Literal["question", "channel"]

QUESTION_WORDS = frozenset(
    {
        "how", "what", "why", "when", "where", "which", "who", "whom", "whose",
        "can", "could", "should", "would", "will", "does", "do", "did", "is", "are",
        "was", "were", "has", "have", "may", "must", "shall",
        "explain", "compare", "show", "tell", "describe", "list", "give", "help",
        "create", "make", "write", "set", "configure", "enable", "disable", "use",
        "migrate", "deploy", "install", "fix", "debug", "troubleshoot", "find", "get",
    }
)  # fmt: skip

_HELP_WORDS = frozenset({"", "help", "-h", "--help", "?", "usage"})
_EXPLICIT = {"search": "search", "pay": "pay", "doc": "doc", "docs": "doc", "ask": "answer"}
#: `/gdocs private …`: the answer goes to the asker alone (with a button to share it)
_PRIVATE = frozenset({"private", "-p", "--private"})

# Google Pay & Wallet vocabulary; word-bounded and case-insensitive
_PAY_RE = re.compile(
    r"\b(?:"
    r"google[\s-]?pay|g[\s-]?pay|google[\s-]?wallet|wallet|"
    r"(?:generic|loyalty|boarding|gift[\s-]?card|offer|event[\s-]?ticket|transit)\s+pass(?:es)?|"
    r"passes\s+api|wallet\s+passes|save\s+to\s+(?:google\s+)?wallet|"
    r"payment[\s-]?data[\s-]?request|paymentdatarequest|is[\s-]?ready[\s-]?to[\s-]?pay(?:request)?|"
    r"loadpaymentdata|paymentsclient|allowedpaymentmethods|payment\s+methods?|"
    r"payment\s+gateway|payment\s+token|tokeni[sz]ation|tokenizationspecification|"
    r"pay\s+api|merchant\s+id|merchantinfo"
    r")\b",
    re.IGNORECASE,
)

# a short follow-up that leans on what the thread was about
_FOLLOW_UP_OPENERS = (
    "what about", "how about", "and ", "also ", "same ", "what if", "but ", "or ",
    "in ", "for ", "with ", "without ", "instead", "then ", "ok ", "okay ",
)  # fmt: skip
_BACK_REFERENCES = frozenset(
    {"it", "its", "that", "this", "those", "these", "them", "there", "instead", "same"}
)
FOLLOW_UP_MAX_WORDS = 8

_WORD_RE = re.compile(r"[\w'’-]+", re.UNICODE)


@dataclass(frozen=True)
class Route:
    kind: RouteKind
    #: the text to send (for `doc`: the reference the user gave)
    query: str
    #: what the thread is about, to remember for later follow-ups (None: the query itself)
    topic: str | None = None
    #: answer the asker alone (`private …`)
    private: bool = False
    #: the `data_source` hosts to limit it to (`in:PRODUCT …`, the channel's products)
    scope: Scope = ()
    #: who chose `scope`: the question's own `in:` (`in:all` too, so the channel's products
    #: do not apply) or the channel (said so on the answer); None: nobody, all products
    scope_from: ScopeFrom | None = None
    #: `in:` words naming no scope (an unknown product, or too many): refused, not asked
    scope_error: ScopeError | None = field(default=None, compare=False)


#: routes a product scope limits (a whole page and Pay's own docs are not limited)
SCOPED_KINDS = frozenset({"answer", "search"})
_IN = "in:"


def split_scope(text: str) -> tuple[list[str] | None, str]:
    """The product words of the `in:` words among the first (before, between or after
    `private`, `search`, …) and the text without them; None: no `in:` word."""
    words, kept, found = text.split(" "), [], None
    for index, word in enumerate(words):
        if word[: len(_IN)].lower() == _IN and len(word) > len(_IN):
            found = [*(found or []), word[len(_IN) :]]
        elif word.lower() in _PRIVATE or word.lower() in _EXPLICIT:
            kept.append(word)
        else:
            return found, clean_text(" ".join([*kept, *words[index:]]))
    return found, " ".join(kept)


def strip_mention(text: str, bot_user_id: str | None) -> str:
    if not bot_user_id:
        return clean_text(text)
    without = re.sub(rf"<@{re.escape(bot_user_id)}(?:\|[^>]*)?>", " ", text)
    return clean_text(re.sub(r"[ \t]{2,}", " ", without))


def is_question(text: str, *, answer_min_words: int) -> bool:
    """True for something answer_query should answer; False for a keyword lookup."""
    if "?" in text or "？" in text:
        return True
    found = _WORD_RE.findall(text.lower())
    if found and found[0] in QUESTION_WORDS:
        return True
    return len(found) >= answer_min_words


def asked_words(text: str) -> str:
    """What was asked, without the words that said how (`private`, `search`, `in:…`, …)."""
    words = split_scope(clean_text(text))[1]
    for said_how in (_PRIVATE, _EXPLICIT):
        first, _, rest = words.partition(" ")
        if first.lower() in said_how and rest.strip():
            words = rest.strip()
    return words


def channel_words(text: str) -> str | None:
    """The words after `channel` in `/gdocs channel …`, else None."""
    first, _, rest = clean_text(text).partition(" ")
    return rest.strip() if first.lower() == "channel" else None


#: routes a channel's `private` setting makes private: not help or quota (the asker's
#: alone already), nor a whole page (posted where it was asked, `/gdocs doc`)
_PRIVATE_KINDS = frozenset({"answer", "search", "pay"})


def with_channel_privacy(route: Route, private: bool) -> Route:
    """`route`, private when the channel's answers are (`/gdocs channel private on`)."""
    if not private or route.private or route.kind not in _PRIVATE_KINDS:
        return route
    return replace(route, private=True)


def with_channel(route: Route, settings: ChannelSettings) -> Route:
    """`route` with the channel's privacy and products (a question's own `in:` wins)."""
    route = with_channel_privacy(route, settings.private)
    if route.scope_from or not settings.products or route.kind not in SCOPED_KINDS:
        return route
    return replace(route, scope=settings.products, scope_from="channel")


#: how much of a thread's first message goes with a question about one of its replies
ROOT_CONTEXT_CHARS = 500


def with_root_context(root: str | None, text: str) -> str:
    """A reply asked about with its thread's first message: "<root> — follow-up: <text>"."""
    first = clean_text(root or "")[:ROOT_CONTEXT_CHARS].strip()
    if not first or first == clean_text(text):
        return text
    return f"{first} — follow-up: {text}"


def is_follow_up(text: str) -> bool:
    """A short text that opens like a follow-up or refers back ("what about in Go?")."""
    found = _WORD_RE.findall(text.lower())
    if not found or len(found) > FOLLOW_UP_MAX_WORDS:
        return False
    lowered = " ".join(found) + " "
    if lowered.startswith(_FOLLOW_UP_OPENERS):
        return True
    return any(word in _BACK_REFERENCES for word in found)


def with_thread_context(earlier: str | None, text: str) -> str:
    """`text`, or "<earlier> — follow-up: <text>" when it is a follow-up in a known thread."""
    if not earlier or not is_follow_up(text):
        return text
    return f"{earlier} — follow-up: {text}"


@dataclass(frozen=True)
class Router:
    answer_min_words: int = 4
    route_pay_questions: bool = True

    def route(self, text: str) -> Route:
        """The route for a `/gdocs` text, a mention (bot id stripped) or a DM."""
        names, text = split_scope(clean_text(text))
        if names is None:
            return self._route(text, pay=True)
        try:
            scope = scope_of(names)
        except ScopeError as error:
            return Route("answer", text, scope_from="question", scope_error=error)
        # with its own products a question stays with Google's docs, not Pay's
        return replace(self._route(text, pay=False), scope=scope, scope_from="question")

    def _route(self, text: str, *, pay: bool) -> Route:
        first, _, rest = text.partition(" ")
        keyword, rest = first.lower(), rest.strip()
        if keyword in _PRIVATE and rest:
            inner = self._route(rest, pay=pay)
            return replace(inner, private=inner.kind != "help")
        if not rest and (keyword in _HELP_WORDS or keyword in _PRIVATE):
            return Route("help", "")  # `private` with nothing to ask: how to use it
        # report: the week's, for admins; team: the team answers given here (flows/team.py)
        if not rest and keyword in ("quota", "report", "team"):
            return Route(keyword, "")  # type: ignore[arg-type]
        if keyword in _EXPLICIT:
            return Route(_EXPLICIT[keyword], rest)  # type: ignore[arg-type]
        return self._free(text, pay=pay)

    def route_message(self, text: str) -> Route:
        """Someone's message asked about (the message shortcut): never a command's keyword."""
        return self._free(clean_text(text), pay=True)

    def route_in_thread(
        self, text: str, earlier: str | None, earlier_scope: Scope | None = None
    ) -> Route:
        """`route`, but a follow-up in a known thread carries the thread's question and the
        products it named itself (`earlier_scope`), unless it names its own."""
        route = self.route(text)
        if route.kind == "help" or route.query != split_scope(clean_text(text))[1]:
            return route  # help, or an explicit `search`/`pay`/`doc`/`ask`: taken as typed
        combined = with_thread_context(earlier, route.query)
        if combined == route.query:
            return route
        if route.scope_from is None and earlier_scope is not None:
            route = replace(route, scope=earlier_scope, scope_from="question")
        routed = self._free(combined, pay=route.scope_from is None)
        return replace(route, kind=routed.kind, query=routed.query, topic=earlier)

    def _free(self, text: str, *, pay: bool) -> Route:
        if pay and self.route_pay_questions and _PAY_RE.search(text):
            return Route("pay", text)
        if is_question(text, answer_min_words=self.answer_min_words):
            return Route("answer", text)
        return Route("search", text)


# --- which channel messages the bot answers without a mention: a person's new message,
# mentioning nobody, reading as a question. The reasons are fixed words for the DEBUG log.

#: `channel_type` of the message events the follow-up listener hears
THREAD_CHANNEL_TYPES = frozenset({"channel", "group"})

#: a person (`<@U…>`, `<@W…>`), a user group (`<!subteam^…>`) or `<!here>`-style broadcast
_ADDRESSED_RE = re.compile(r"<@[UW][A-Z0-9]*|<!(?:subteam\^|here\b|channel\b|everyone\b)")


def addresses_someone(text: str) -> bool:
    return _ADDRESSED_RE.search(text) is not None


def reads_as_question(text: str) -> bool:
    return is_question(text, answer_min_words=sys.maxsize)


def _str(event: dict[str, Any], name: str) -> str | None:
    value = event.get(name)
    return value if isinstance(value, str) and value else None


def why_not_a_follow_up(event: dict[str, Any], bot_user_id: str | None) -> str | None:
    """Why this is not a follow-up (None: it may be one)."""
    why = why_not_a_person(event, bot_user_id)
    if why is None and is_top_level(event):
        return "not a reply in a thread"
    return why or why_not_asked(event)


def is_top_level(event: dict[str, Any]) -> bool:
    thread_ts = _str(event, "thread_ts")
    return thread_ts is None or thread_ts == _str(event, "ts")


def why_not_a_person(event: dict[str, Any], bot_user_id: str | None) -> str | None:
    user = _str(event, "user")
    if "subtype" in event or _str(event, "bot_id") or user is None or user == bot_user_id:
        return "not a person's new message"
    if _str(event, "channel") is None or _str(event, "ts") is None:
        return "not a person's new message"
    return None


def why_not_asked(event: dict[str, Any]) -> str | None:
    text = event.get("text") if isinstance(event.get("text"), str) else ""
    if addresses_someone(text or ""):
        return "mentions someone (the bot's own mentions come as app_mention)"
    if not reads_as_question(text or ""):
        return "does not read as a question"
    return None
