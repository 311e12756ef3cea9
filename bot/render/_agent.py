"""Words of Slack's agent experience: suggested prompts and the thread status."""

from __future__ import annotations

from typing import Literal, TypedDict

#: Slack shows at most four suggested prompts
MAX_PROMPTS = 4
#: Slack rotates through at most ten loading messages
MAX_LOADING_MESSAGES = 10
#: the manifest's `agent_description` is at most 300 characters
MAX_AGENT_DESCRIPTION_CHARS = 300


class SuggestedPrompt(TypedDict):
    """One prompt of `assistant.threads.setSuggestedPrompts`: a short title, the text sent."""

    title: str
    message: str


AGENT_DESCRIPTION = (
    "Answers questions about Google's developer products (Cloud, Firebase, Android, Maps, Pay "
    "and more) from Google's official documentation, with links to the pages it used. It can "
    "also search the docs and bring a whole page into the conversation."
)

#: generated answers are scarce (a daily quota), so one prompt searches and one asks Pay
SUGGESTED_PROMPTS: tuple[SuggestedPrompt, ...] = (
    {
        "title": "Create a Cloud Storage bucket",
        "message": "How do I create a Cloud Storage bucket with gcloud?",
    },
    {
        "title": "Firebase sign-in on Android",
        "message": "How do I add Google sign-in to an Android app with Firebase Authentication?",
    },
    {
        "title": "Search the docs",
        "message": "search Cloud Run environment variables",
    },
    {
        "title": "Google Pay on a website",
        "message": "pay How do I add a Google Pay button to my website?",
    },
)

#: the `title` argument of setSuggestedPrompts, shown above the prompts
PROMPTS_TITLE = "Ask Google's developer documentation"

WorkKind = Literal["answer", "search", "pay", "doc"]

#: Slack shows the status after the app's name: "gdocs is searching Google's docs…"
_STATUS: dict[WorkKind, str] = {
    "answer": "is searching Google's docs…",
    "search": "is searching Google's docs…",
    "pay": "is searching the Google Pay & Wallet docs…",
    "doc": "is fetching the page…",
}
_LOADING: dict[WorkKind, tuple[str, ...]] = {
    "answer": (
        "Reading Google's documentation…",
        "Checking the pages that answer this…",
        "Writing a short answer with sources…",
    ),
    "search": (
        "Searching Google's documentation…",
        "Collecting the best matching pages…",
    ),
    "pay": (
        "Searching the Google Pay & Wallet documentation…",
        "Collecting the best matching pages…",
    ),
    "doc": (
        "Fetching the page from Google's documentation…",
        "Laying the page out for Slack…",
    ),
}


def suggested_prompts() -> list[SuggestedPrompt]:
    """The prompts to send with setSuggestedPrompts (a fresh list: callers may change it)."""
    return [SuggestedPrompt(title=p["title"], message=p["message"]) for p in SUGGESTED_PROMPTS]


def assistant_status(kind: WorkKind = "answer") -> str:
    """The thread status while the bot works on a question of this kind."""
    return _STATUS.get(kind, _STATUS["answer"])


def loading_messages(kind: WorkKind = "answer") -> list[str]:
    """A few messages Slack rotates through under the status (at most ten)."""
    return list(_LOADING.get(kind, _LOADING["answer"]))[:MAX_LOADING_MESSAGES]


#: what `setStatus` takes to clear the status (an empty status)
CLEARED_STATUS = ""
