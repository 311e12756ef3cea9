"""What Slack sends for the agent view, the Home tab, link previews, channel threads, feedback
buttons and modals: pure payload builders, shared by every test path (HTTP and Socket Mode).

Shapes follow Slack's documentation and the typed payloads of Slack's own SDKs:
- events: api.slack.com/events/app_home_opened, /events/link_shared (and the composer form in
  api.slack.com/changelog/2021-08-changes-to-unfurls), /events/message; `@slack/types`
  packages/types/src/events/{app,link-shared,message}.ts (slackapi/node-slack-sdk 4322e14);
  a captured Messages-tab `app_home_opened` (slack-web's golden test
  app_home_opened_messages.json: no `view` on that tab);
- interactions: api.slack.com/reference/interaction-payloads/block-actions and /views;
  bolt-js src/types/actions/block-action.ts (`FeedbackButtonsAction`: type, block_id,
  action_id, action_ts, value, text) and src/types/view/index.ts (`ViewSubmitAction`,
  `ViewOutput`), slackapi/bolt-js 9a45c3c.
"""

from __future__ import annotations

import itertools
import time
import uuid
from typing import Any, Literal

from tests.fakes.slack_api import BOT_ID

_ids = itertools.count(1)
TEAM = {"id": "T1", "domain": "test"}
#: manifest.yml's `features.unfurl_domains` (tests/test_manifest.py checks it)
UNFURL_DOMAINS: tuple[str, ...] = (
    "docs.cloud.google.com",
    "cloud.google.com",
    "firebase.google.com",
    "developer.android.com",
    "developers.google.com",
)


def _ts() -> str:
    return f"1710000200.{next(_ids):06d}"


def _view_output(view: dict[str, Any], *, values: dict[str, Any] | None = None) -> dict[str, Any]:
    """A view as Slack echoes it back (ViewOutput): ids, hash, state and the sent fields."""
    view_id = f"V{next(_ids):08d}"
    return {
        "id": view_id,
        "team_id": "T1",
        "type": view.get("type", "modal"),
        "blocks": view.get("blocks", []),
        "private_metadata": view.get("private_metadata", ""),
        "callback_id": view.get("callback_id", ""),
        "state": {"values": values or {}},
        "hash": f"{int(time.time())}.{uuid.uuid4().hex[:8]}",
        "title": view.get("title"),
        "clear_on_close": False,
        "notify_on_close": False,
        "close": view.get("close"),
        "submit": view.get("submit"),
        "previous_view_id": None,
        "root_view_id": view_id,
        "app_id": "A1",
        "external_id": "",
        "app_installed_team_id": "T1",
        "bot_id": BOT_ID,
    }


# --- events ------------------------------------------------------------------------------------
def app_home_opened_event(
    *,
    user: str,
    channel: str,
    tab: Literal["home", "messages"],
    published: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The person opened the Home or Messages tab. A Home tab that has had a view published
    before carries it as `view`; the Messages tab never does."""
    event: dict[str, Any] = {
        "type": "app_home_opened",
        "user": user,
        "channel": channel,
        "tab": tab,
        "event_ts": _ts(),
    }
    if tab == "home" and published is not None:
        event["view"] = _view_output(published)
    return event


def _unfurl_domain(url: str) -> str:
    """`links[].domain` is the registered unfurl domain the URL matched (Slack's example has
    domain `another-example.com` for https://yet.another-example.com/…): the most specific."""
    host = url.split("://", 1)[-1].split("/", 1)[0].split(":", 1)[0].lower()
    matches = [d for d in UNFURL_DOMAINS if host == d or host.endswith("." + d)]
    return max(matches, key=len) if matches else host


def link_shared_event(
    links: list[str],
    *,
    user: str,
    channel: str = "C1",
    source: Literal["conversations_history", "composer"] = "conversations_history",
    message_ts: str | None = None,
    unfurl_id: str | None = None,
    thread_ts: str | None = None,
) -> dict[str, Any]:
    """Links to registered domains were posted (`conversations_history`) or typed into the
    message box (`composer`: channel "COMPOSER", message_ts = unfurl_id, no real message)."""
    if source == "composer":
        draft = unfurl_id or f"{user}-{uuid.uuid4()}-{uuid.uuid4().hex[:24]}"
        channel, message_ts, unfurl_id = "COMPOSER", draft, draft
    else:
        message_ts = message_ts or _ts()
        unfurl_id = unfurl_id or f"{channel}.{message_ts}.{uuid.uuid4().hex}"
    event: dict[str, Any] = {
        "type": "link_shared",
        "channel": channel,
        "is_bot_user_member": True,
        "user": user,
        "message_ts": message_ts,
        "unfurl_id": unfurl_id,
        "source": source,
        "links": [{"domain": _unfurl_domain(url), "url": url} for url in links],
        "event_ts": _ts(),
    }
    if thread_ts:  # only when the link was shared in a thread
        event["thread_ts"] = thread_ts
    return event


MessageSubtype = Literal["bot_message", "message_changed", "channel_join"]


def channel_message_event(
    text: str,
    *,
    user: str,
    channel: str = "C1",
    channel_type: Literal["channel", "group"] = "channel",
    thread_ts: str | None = None,
    parent_user_id: str | None = None,
    subtype: MessageSubtype | None = None,
    bot_id: str | None = None,
    previous_text: str = "(before the edit)",
) -> dict[str, Any]:
    """A `message.channels` / `message.groups` event.

    - no subtype: a person's message (with `bot_id`: an app's message, which Slack sends
      *without* a subtype, with the bot's user id, `bot_id`, `app_id` and `bot_profile`);
    - `bot_message`: a classic bot or webhook post: `bot_id`, a username, no `user`;
    - `message_changed`: an edit: `hidden`, no top-level user/text/thread_ts; the edited
      message and the one before it in `message` / `previous_message`;
    - `channel_join`: "<@U…> has joined the channel", never in a thread.

    A reply in a thread carries `thread_ts` and `parent_user_id` (who wrote the thread's
    first message; by default the same person, who follows up on their own question).
    """
    ts = _ts()
    base: dict[str, Any] = {"type": "message", "channel": channel, "channel_type": channel_type}
    if subtype == "channel_join":
        return {
            **base,
            "subtype": "channel_join",
            "user": user,
            "text": f"<@{user}> has joined the channel",
            "inviter": "UINVITER",
            "team": "T1",
            "ts": ts,
            "event_ts": ts,
        }
    in_thread = {"thread_ts": thread_ts, "parent_user_id": parent_user_id or user}
    threaded = {k: v for k, v in in_thread.items() if thread_ts and v}
    if subtype == "bot_message":
        return {
            **base,
            "subtype": "bot_message",
            "text": text,
            "bot_id": bot_id or "BOTHER",
            "username": "other-bot",
            "ts": ts,
            "event_ts": ts,
            **threaded,
        }
    message = _person_message(text, user=user, ts=ts, bot_id=bot_id) | threaded
    if subtype == "message_changed":
        original = f"1710000100.{next(_ids):06d}"
        edited = message | {"ts": original, "edited": {"user": user, "ts": ts}}
        before = message | {"ts": original, "text": previous_text}
        before.pop("blocks", None)
        return {
            **base,
            "subtype": "message_changed",
            "hidden": True,
            "ts": ts,
            "event_ts": ts,
            "message": edited,
            "previous_message": before,
        }
    return {**base, **message, "event_ts": ts}


def _person_message(text: str, *, user: str, ts: str, bot_id: str | None) -> dict[str, Any]:
    message: dict[str, Any] = {
        "type": "message",
        "user": user,
        "text": text,
        "ts": ts,
        "team": "T1",
        "blocks": [
            {
                "type": "rich_text",
                "block_id": uuid.uuid4().hex[:5],
                "elements": [
                    {"type": "rich_text_section", "elements": [{"type": "text", "text": text}]}
                ],
            }
        ],
    }
    if bot_id:
        message |= {
            "bot_id": bot_id,
            "app_id": "AOTHER",
            "bot_profile": {
                "id": bot_id,
                "app_id": "AOTHER",
                "name": "other-app",
                "deleted": False,
            },
        }
    else:
        message["client_msg_id"] = str(uuid.uuid4())
    return message


# --- interactions --------------------------------------------------------------------------------
def feedback_action(
    value: str,
    *,
    action_id: str = "answer_feedback",
    block_id: str = "answer_feedback",
    text: str = "👍",
) -> dict[str, Any]:
    """The `actions[0]` of a click on a feedback button: `type: "feedback_buttons"`, the
    element's action_id, the clicked button's value and text."""
    return {
        "type": "feedback_buttons",
        "action_id": action_id,
        "block_id": block_id,
        "value": value,
        "text": {"type": "plain_text", "text": text, "emoji": True},
        "action_ts": str(time.time()),
    }


def home_tab_actions(
    action: dict[str, Any], *, user: str, view: dict[str, Any], trigger_id: str
) -> dict[str, Any]:
    """A block_actions click on the Home tab: the container is the view; no channel, no
    message and no response_url; the user object carries `name`."""
    output = _view_output(view)
    return {
        "type": "block_actions",
        "user": {"id": user, "username": f"user-{user}", "name": f"user-{user}", "team_id": "T1"},
        "api_app_id": "A1",
        "token": "deprecated-verification-token",
        "container": {"type": "view", "view_id": output["id"]},
        "trigger_id": trigger_id,
        "team": TEAM,
        "enterprise": None,
        "is_enterprise_install": False,
        "view": output,
        "actions": [{"action_ts": str(time.time()), **action}],
        "state": {"values": {}},
    }


def view_submission(
    *,
    user: str,
    callback_id: str,
    private_metadata: str,
    values: dict[str, dict[str, Any]],
    trigger_id: str,
    view: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A submitted modal: `view.state.values[block_id][action_id]` holds each
    plain_text_input's `{type, value}` (null when an optional field was left empty); a
    dict value is another element's state as is (radio_buttons' `selected_option`)."""
    state = {
        block_id: {
            action_id: value
            if isinstance(value, dict)
            else {"type": "plain_text_input", "value": value}
            for action_id, value in actions.items()
        }
        for block_id, actions in values.items()
    }
    sent = {**(view or {"type": "modal"}), "callback_id": callback_id}
    sent["private_metadata"] = private_metadata
    return {
        "type": "view_submission",
        "team": TEAM,
        "user": {"id": user, "username": f"user-{user}", "name": f"user-{user}", "team_id": "T1"},
        "api_app_id": "A1",
        "token": "deprecated-verification-token",
        "trigger_id": trigger_id,
        "view": _view_output(sent, values=state),
        "response_urls": [],
        "is_enterprise_install": False,
        "enterprise": None,
    }


def message_shortcut(
    *,
    user: str,
    channel: str,
    message: dict[str, Any],
    callback_id: str,
    response_url: str,
    trigger_id: str,
) -> dict[str, Any]:
    """A message shortcut used on `message` (api.slack.com/reference/interaction-payloads/
    shortcuts, bolt-js src/types/shortcuts/message-shortcut.ts `MessageShortcut`):
    `type: message_action`, the message as Slack shows it, who used it, where, and a
    response_url."""
    return {
        "type": "message_action",
        "callback_id": callback_id,
        "trigger_id": trigger_id,
        "message_ts": message.get("ts"),
        "response_url": response_url,
        "message": {"type": "message", **message},
        "user": {"id": user, "username": f"user-{user}", "name": f"user-{user}", "team_id": "T1"},
        # a DM's name is Slack's placeholder
        "channel": {"id": channel, "name": "directmessage" if channel[0] == "D" else "general"},
        "team": TEAM,
        "token": "deprecated-verification-token",
        "action_ts": str(time.time()),
        "is_enterprise_install": False,
        "enterprise": None,
    }


# --- Enterprise Grid: an org-wide install, one bot token for every workspace of the org ------
# api.slack.com/enterprise/apps/reference and /enterprise/apps/changes-apis: an event names the
# workspace it happened in (`team_id`, `event.team`) and carries `authorizations[0]` with
# `is_enterprise_install: true`; an interaction may say `team: null` (the workspace is then in
# `user.team_id`); slack_bolt/request/internals.py reads them so.
def org_wide_auth_test(enterprise: str, *, user_id: str, bot_id: str = BOT_ID) -> dict[str, Any]:
    """What auth.test answers for an org-wide bot token: the organisation, not a workspace."""
    return {
        "ok": True,
        "url": "https://org.enterprise.slack.com/",
        "user_id": user_id,
        "bot_id": bot_id,
        "user": "gdocs",
        "team": f"Org {enterprise}",
        "team_id": enterprise,
        "enterprise_id": enterprise,
        "is_enterprise_install": True,
    }


def grid_event_callback(
    event: dict[str, Any], *, team: str, enterprise: str, bot_user: str, event_id: str
) -> dict[str, Any]:
    """An Events API callback of an org-wide install for an event in workspace `team`."""
    return {
        "token": "deprecated-verification-token",
        "team_id": team,
        "enterprise_id": enterprise,
        "context_team_id": team,
        "context_enterprise_id": enterprise,
        "api_app_id": "A1",
        "type": "event_callback",
        "event_id": event_id,
        "event_time": int(time.time()),
        "is_ext_shared_channel": False,
        "authorizations": [
            {
                "enterprise_id": enterprise,
                "team_id": team,
                "user_id": bot_user,
                "is_bot": True,
                "is_enterprise_install": True,
            }
        ],
        "event": {**event, "team": team},
    }


def grid_interaction(payload: dict[str, Any], *, team: str, enterprise: str) -> dict[str, Any]:
    """`payload` (a shortcut, click or submission) as an org-wide install receives it from a
    person of workspace `team`: no `team`, the organisation, the workspace in `user.team_id`."""
    user = {**payload.get("user", {}), "team_id": team}
    org = {"id": enterprise, "name": f"Org {enterprise}"}
    return {**payload, "team": None, "user": user, "enterprise": org, "is_enterprise_install": True}
