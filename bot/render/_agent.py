"""Words of Slack's agent experience: the Messages tab's suggested prompts and the status
shown in a thread while the bot works. The prompts and description are also in manifest.yml
(`features.agent_view`; tests/test_manifest.py compares them)."""

from __future__ import annotations

from typing import Literal, TypedDict

#: Slack shows at most four suggested prompts
MAX_PROMPTS = 4
PROMPTS_TITLE = "Ask Google's developer documentation"
#: what `setStatus` takes to clear the status
CLEARED_STATUS = ""
AGENT_DESCRIPTION = (
    "Answers questions about Google's developer products (Cloud, Firebase, Android, Maps, Pay "
    "and more) from Google's official documentation, with links to the pages it used. It can "
    "also search the docs and bring a whole page into the conversation."
)
#: (title, message); generated answers are scarce, so one prompt searches and one asks Pay
SUGGESTED_PROMPTS = (
    ("Create a Cloud Storage bucket", "How do I create a Cloud Storage bucket with gcloud?"),
    (
        "Firebase sign-in on Android",
        "How do I add Google sign-in to an Android app with Firebase Authentication?",
    ),
    ("Search the docs", "search Cloud Run environment variables"),
    ("Google Pay on a website", "pay How do I add a Google Pay button to my website?"),
)

WorkKind = Literal["answer", "search", "pay", "doc"]

#: Slack shows the status after the app's name: "gdocs is searching Google's docs…"
_STATUS: dict[WorkKind, str] = {
    "answer": "is searching Google's docs…",
    "search": "is searching Google's docs…",
    "pay": "is searching the Google Pay & Wallet docs…",
    "doc": "is fetching the page…",
}
#: Slack rotates through at most ten of these under the status
_LOADING: dict[WorkKind, list[str]] = {
    "answer": [
        "Reading Google's documentation…",
        "Checking the pages that answer this…",
        "Writing a short answer with sources…",
    ],
    "search": ["Searching Google's documentation…", "Collecting the best matching pages…"],
    "pay": [
        "Searching the Google Pay & Wallet documentation…",
        "Collecting the best matching pages…",
    ],
    "doc": ["Fetching the page from Google's documentation…", "Laying the page out for Slack…"],
}


class SuggestedPrompt(TypedDict):
    title: str
    message: str


def suggested_prompts() -> list[SuggestedPrompt]:
    """The prompts for setSuggestedPrompts (a fresh list: callers may change it)."""
    return [SuggestedPrompt(title=title, message=text) for title, text in SUGGESTED_PROMPTS]


def assistant_status(kind: WorkKind = "answer") -> str:
    return _STATUS.get(kind, _STATUS["answer"])


def loading_messages(kind: WorkKind = "answer") -> list[str]:
    return list(_LOADING.get(kind, _LOADING["answer"]))
