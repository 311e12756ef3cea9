"""What Slack's Web API would refuse, for the recording fake (`tests/fakes/slack_api.py`).

Block Kit is checked with `slack_sdk.models` (`to_dict()`, which validates a block and every
element and text object in it; `validate_json()` alone only checks the outer object) plus
the limits slack_sdk does not check: which elements a `context_actions` block may hold and a
feedback button's accessibility label. Method arguments are checked as Slack documents them
(docs.slack.dev/reference/methods/…); an argument error answers like Slack does,
`invalid_arguments` with a `[ERROR] …` message.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from slack_sdk.models.blocks import Block
from slack_sdk.models.views import View

MAX_MESSAGE_BLOCKS = 50
MAX_VIEW_BLOCKS = 100
MAX_TEXT = 40_000
MAX_MARKDOWN_TOTAL = 12_000
MAX_PROMPTS = 4
MAX_LOADING_MESSAGES = 10
_CONTEXT_ACTIONS_ELEMENTS = ("feedback_buttons", "icon_button")
_FEEDBACK_BUTTONS_KEYS = {"type", "action_id", "positive_button", "negative_button"}
_FEEDBACK_BUTTON_KEYS = {"text", "value", "accessibility_label"}
_VIEW_KEYS = {
    "type", "blocks", "title", "submit", "close", "private_metadata", "callback_id",
    "clear_on_close", "notify_on_close", "external_id", "submit_disabled",
}  # fmt: skip
_UNFURL_SOURCES = ("composer", "conversations_history")


@dataclass(frozen=True)
class Refusal:
    """Slack's error code for a call, and what is wrong (for the test's failure message)."""

    error: str
    detail: str


def _arguments(detail: str) -> Refusal:
    return Refusal("invalid_arguments", f"[ERROR] {detail}")


def _json(value: Any) -> Any:
    """Form-encoded calls carry JSON arguments as strings; JSON calls as values."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _present(args: dict[str, Any], name: str) -> bool:
    value = args.get(name)
    return isinstance(value, str) and bool(value.strip())


# --- Block Kit -------------------------------------------------------------------------------
def check_block(raw: Any) -> str | None:
    """What is wrong with one block, or None."""
    if not isinstance(raw, dict):
        return f"block is not an object: {raw!r:.80}"
    try:
        block = Block.parse(raw)
        if block is None:
            return f"unknown block {raw!r:.80}"
        block.to_dict()  # validates the block and everything in it
    except Exception as exc:
        return f"invalid block: {exc}"
    if raw.get("type") == "context_actions":
        return _check_context_actions(raw)
    return None


def _check_context_actions(raw: dict[str, Any]) -> str | None:
    elements = raw.get("elements")
    if not isinstance(elements, list) or not 1 <= len(elements) <= 5:
        return "context_actions needs 1 to 5 elements"
    for element in elements:
        kind = element.get("type") if isinstance(element, dict) else None
        if kind not in _CONTEXT_ACTIONS_ELEMENTS:
            return f"context_actions cannot hold a {kind!r} element"
        if kind == "feedback_buttons":
            problem = _check_feedback_buttons(element)
            if problem:
                return problem
    return None


def _check_feedback_buttons(element: dict[str, Any]) -> str | None:
    extra = set(element) - _FEEDBACK_BUTTONS_KEYS
    if extra:
        return f"feedback_buttons has unknown fields {sorted(extra)}"
    if len(str(element.get("action_id", ""))) > 255:
        return "feedback_buttons action_id over 255 characters"
    for side in ("positive_button", "negative_button"):
        button = element.get(side)
        if not isinstance(button, dict):
            return f"feedback_buttons needs a {side}"
        if set(button) - _FEEDBACK_BUTTON_KEYS:
            return f"{side} has unknown fields {sorted(set(button) - _FEEDBACK_BUTTON_KEYS)}"
        text = button.get("text")
        if not isinstance(text, dict) or text.get("type") != "plain_text":
            return f"{side} text must be a plain_text object"
        if not 1 <= len(str(text.get("text", ""))) <= 75:
            return f"{side} text must be 1 to 75 characters"
        value = button.get("value")
        if not isinstance(value, str) or not 1 <= len(value) <= 2000:
            return f"{side} value must be 1 to 2000 characters"
        label = button.get("accessibility_label")
        if label is not None and (not isinstance(label, str) or len(label) > 75):
            return f"{side} accessibility_label over 75 characters"
    return None


def check_blocks(blocks: Any, *, max_blocks: int) -> str | None:
    """What is wrong with a list of blocks (count, each block, markdown total), or None."""
    blocks = _json(blocks)
    if not isinstance(blocks, list):
        return "blocks is not a list"
    if len(blocks) > max_blocks:
        return f"{len(blocks)} blocks (max {max_blocks})"
    markdown_total = 0
    for raw in blocks:
        problem = check_block(raw)
        if problem:
            return problem
        if raw.get("type") == "markdown":
            markdown_total += len(raw.get("text", ""))
    if markdown_total > MAX_MARKDOWN_TOTAL:
        return f"markdown blocks total {markdown_total} chars (max {MAX_MARKDOWN_TOTAL})"
    return None


def check_message(args: dict[str, Any]) -> str | None:
    """What Slack would refuse about a message payload (blocks need a text fallback)."""
    text = args.get("text")
    if args.get("blocks") is not None:
        problem = check_blocks(args["blocks"], max_blocks=MAX_MESSAGE_BLOCKS)
        if problem:
            return problem
        if not text:
            return "blocks sent without a text fallback"
    if isinstance(text, str) and len(text) > MAX_TEXT:
        return f"text of {len(text)} chars"
    return None


# --- views -------------------------------------------------------------------------------------
def check_view(raw: Any, *, kinds: tuple[str, ...]) -> str | None:
    """What is wrong with a view (`views.publish` / `views.open` / `views.update`), or None."""
    view = _json(raw)
    if not isinstance(view, dict):
        return "view is not an object"
    if view.get("type") not in kinds:
        return f"view type {view.get('type')!r} (expected {' or '.join(kinds)})"
    if set(view) - _VIEW_KEYS:
        return f"view has unknown fields {sorted(set(view) - _VIEW_KEYS)}"
    if not isinstance(view.get("blocks"), list) or not view["blocks"]:
        return "view has no blocks"
    try:
        View(**view).validate_json()  # type, title/submit/close lengths, ≤ 100 blocks, metadata
    except Exception as exc:
        return f"invalid view: {exc}"
    problem = check_blocks(view["blocks"], max_blocks=MAX_VIEW_BLOCKS)
    if problem:
        return problem
    if view["type"] == "modal":
        if not isinstance(view.get("title"), dict):
            return "a modal needs a title"
        has_input = any(b.get("type") == "input" for b in view["blocks"])
        if has_input and not isinstance(view.get("submit"), dict):
            return "a modal with an input block needs a submit button"
    return None


# --- methods -----------------------------------------------------------------------------------
def _views_publish(args: dict[str, Any]) -> Refusal | None:
    if not _present(args, "user_id"):
        return _arguments("missing required field: user_id")
    problem = check_view(args.get("view"), kinds=("home",))
    return _arguments(f"{problem} [json-pointer:/view]") if problem else None


def _views_open(args: dict[str, Any]) -> Refusal | None:
    if not (_present(args, "trigger_id") or _present(args, "interactivity_pointer")):
        return _arguments("missing required field: trigger_id")
    problem = check_view(args.get("view"), kinds=("modal",))
    return _arguments(f"{problem} [json-pointer:/view]") if problem else None


def _views_update(args: dict[str, Any]) -> Refusal | None:
    if not (_present(args, "view_id") or _present(args, "external_id")):
        return _arguments("missing required field: view_id or external_id")
    problem = check_view(args.get("view"), kinds=("modal", "home"))
    return _arguments(f"{problem} [json-pointer:/view]") if problem else None


def _chat_unfurl(args: dict[str, Any]) -> Refusal | None:
    by_message = _present(args, "channel") and _present(args, "ts")
    by_id = _present(args, "unfurl_id") and _present(args, "source")
    if not (by_message or by_id):
        return _arguments("channel and ts, or unfurl_id and source, are required")
    if args.get("source") is not None and args.get("source") not in _UNFURL_SOURCES:
        return Refusal("invalid_source", f"source {args.get('source')!r}")
    unfurls = _json(args.get("unfurls"))
    if not isinstance(unfurls, dict) or not unfurls:
        return Refusal("invalid_unfurls_format", "unfurls must be a JSON object of URL -> unfurl")
    for url, unfurl in unfurls.items():
        if not str(url).startswith(("https://", "http://")):
            return Refusal("invalid_unfurls_format", f"unfurl key is not a URL: {url!r:.80}")
        if not isinstance(unfurl, dict) or set(unfurl) != {"blocks"}:
            return Refusal("invalid_unfurls_format", f"unfurl of {url} must be {{blocks: [...]}}")
        problem = check_blocks(unfurl["blocks"], max_blocks=MAX_MESSAGE_BLOCKS)
        if problem:
            return Refusal("invalid_blocks", f"unfurl of {url}: {problem}")
    return None


def _set_suggested_prompts(args: dict[str, Any]) -> Refusal | None:
    if not _present(args, "channel_id"):
        return _arguments("missing required field: channel_id")
    prompts = _json(args.get("prompts"))
    if not isinstance(prompts, list) or not prompts:
        return _arguments("missing required field: prompts")
    if len(prompts) > MAX_PROMPTS:
        return _arguments(f"no more than {MAX_PROMPTS} items allowed [json-pointer:/prompts]")
    for index, prompt in enumerate(prompts):
        fields = prompt if isinstance(prompt, dict) else {}
        if not all(
            isinstance(fields.get(k), str) and fields[k].strip() for k in ("title", "message")
        ):
            return _arguments(f"title and message are required [json-pointer:/prompts/{index}]")
    if args.get("title") is not None and not isinstance(args.get("title"), str):
        return _arguments("title must be a string")
    return None


def _set_status(args: dict[str, Any]) -> Refusal | None:
    for name in ("channel_id", "thread_ts"):
        if not _present(args, name):
            return _arguments(f"missing required field: {name}")
    if not isinstance(args.get("status"), str):
        return _arguments("missing required field: status")
    loading = _json(args.get("loading_messages"))
    if loading is not None:
        if not isinstance(loading, list) or not all(isinstance(m, str) and m for m in loading):
            return _arguments("loading_messages must be a list of strings")
        if len(loading) > MAX_LOADING_MESSAGES:
            limit = f"no more than {MAX_LOADING_MESSAGES} items allowed"
            return _arguments(f"{limit} [json-pointer:/loading_messages]")
    return None


_METHOD_CHECKS = {
    "views.publish": _views_publish,
    "views.open": _views_open,
    "views.update": _views_update,
    "chat.unfurl": _chat_unfurl,
    "assistant.threads.setSuggestedPrompts": _set_suggested_prompts,
    "assistant.threads.setStatus": _set_status,
}


def refusal(method: str, args: dict[str, Any]) -> Refusal | None:
    """Why Slack would refuse this call, or None (then the fake answers it)."""
    check = _METHOD_CHECKS.get(method)
    if check is not None:
        found = check(args)
        if found:
            return found
    problem = check_message(args)
    return Refusal("invalid_blocks", problem) if problem else None


def silently_ignored(method: str, args: dict[str, Any]) -> str | None:
    """A call Slack answers `ok` but does nothing with, or None."""
    if method == "assistant.threads.setSuggestedPrompts" and args.get("thread_ts"):
        return "thread_ts sent: in the agent view Slack answers ok and shows no prompts"
    return None
