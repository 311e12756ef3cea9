"""manifest.yml: valid for Slack, and exactly what the code needs — no missing scope that
would break a feature in production, no extra scope an admin would have to approve for nothing."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from slack_sdk.web.async_client import AsyncWebClient

from bot.render import CORPUS_HOSTS, doc_name_for_url, suggested_prompts
from tests.fakes.slack_event_payloads import UNFURL_DOMAINS

# --- what the Slack app manifest must declare for the code to work ---
#: slash commands the app registers
COMMANDS: tuple[str, ...] = ("/gdocs",)

#: bot events the app subscribes to
BOT_EVENTS: tuple[str, ...] = (
    "app_mention",
    "message.im",
    # the Home tab (tab "home") and the agent view's Messages tab (tab "messages")
    "app_home_opened",
    # link previews of Google's documentation pages
    "link_shared",
    # follow-up questions in threads the bot answered in, without a mention
    "message.channels",
    "message.groups",
    # the Stop button of a streamed answer
    "agent_session_stopped",
    # an uninstall deletes that installation's tokens and settings (installs by OAuth)
    "app_uninstalled",
    "tokens_revoked",
)

#: bot token scopes, each with the calls that need it
BOT_SCOPES: dict[str, str] = {
    "commands": "/gdocs",
    "chat:write": (
        "chat.postMessage, chat.postEphemeral, chat.update, assistant.threads.setStatus, "
        "chat.startStream / appendStream / stopStream, agents.sessions.setStatus"
    ),
    "app_mentions:read": "app_mention events",
    "im:history": "message.im events (direct messages)",
    "users:read": (
        "users.info for the asker's locale (Pay language), time zone (Home tab) and, with "
        "CHANNEL_SETTINGS_ADMINS_ONLY, whether they are a workspace admin"
    ),
    "files:write": "files.getUploadURLExternal / completeUploadExternal (long documents)",
    "reactions:write": "reactions.add / reactions.remove (progress on mentions)",
    "assistant:write": "assistant.threads.setSuggestedPrompts (the Messages tab's prompts)",
    "links:read": "link_shared events (links to Google's docs)",
    "links:write": "chat.unfurl (link previews)",
    "channels:history": (
        "message.channels events (follow-ups, answer channels), conversations.replies "
        "(a thread's first message for the message shortcut)"
    ),
    "groups:history": "message.groups events and conversations.replies in private channels",
    "channels:read": (
        "users.conversations (the Home tab's public channels with settings), conversations.info "
        "(whether a team answer may be offered to the whole workspace)"
    ),
    "groups:read": "users.conversations (the Home tab's private channels with settings)",
    "mpim:read": "conversations.members (which admins may review a group DM's 👎 suggestion)",
}

ASK_SHORTCUT = "ask_gdocs"
#: message shortcuts: callback_id -> (name, description), as manifest.yml declares them
SHORTCUTS: dict[str, tuple[str, str]] = {
    ASK_SHORTCUT: (
        "Ask Google's docs",
        "Answer this message's question from Google's developer documentation, in its thread",
    ),
    "save_team_answer": (
        "Save as team answer",
        "Keep this message as the team's answer to a question, given instead of asking "
        "Google's docs",
    ),
}

#: interactivity must be on: "Show full doc", "Next page", feedback and other buttons
INTERACTIVITY = True


ROOT = Path(__file__).resolve().parents[1]
#: ../shared/slack next to the checkout, or next to the folder of worktrees it sits in
SHARED_SLACK = next(
    (p / "shared" / "slack" for p in ROOT.parents if (p / "shared" / "slack").is_dir()),
    ROOT.parent / "shared" / "slack",
)
SCHEMAS = sorted(SHARED_SLACK.glob("manifest.schema.*.json"))

#: Web API method (as called on AsyncWebClient) -> bot scopes it needs. A method the code
#: starts calling that is missing here fails the test until its scope is decided.
SCOPES_FOR_METHOD: dict[str, frozenset[str]] = {
    "auth_test": frozenset(),
    "apps_connections_open": frozenset(),  # app-level token (connections:write), not a bot scope
    "chat_postMessage": frozenset({"chat:write"}),
    "chat_postEphemeral": frozenset({"chat:write"}),
    "chat_update": frozenset({"chat:write"}),
    "chat_delete": frozenset({"chat:write"}),
    "chat_startStream": frozenset({"chat:write"}),
    "chat_appendStream": frozenset({"chat:write"}),
    "chat_stopStream": frozenset({"chat:write"}),
    "chat_stream": frozenset({"chat:write"}),
    "agents_sessions_setStatus": frozenset({"chat:write"}),
    # accepts chat:write since 2026-03 (shared/reference/slack.md)
    "assistant_threads_setStatus": frozenset({"chat:write"}),
    "assistant_threads_setSuggestedPrompts": frozenset({"assistant:write"}),
    "assistant_threads_setTitle": frozenset({"assistant:write"}),
    "reactions_add": frozenset({"reactions:write"}),
    "reactions_remove": frozenset({"reactions:write"}),
    "users_info": frozenset({"users:read"}),
    "files_upload_v2": frozenset({"files:write"}),
    "files_getUploadURLExternal": frozenset({"files:write"}),
    "files_completeUploadExternal": frozenset({"files:write"}),
    "conversations_replies": frozenset({"channels:history", "groups:history", "im:history"}),
    # the Home tab's channels with settings: public and private channels the viewer is in
    "users_conversations": frozenset({"channels:read", "groups:read"}),
    # whether a team answer may be offered to the whole workspace (public channels only)
    "conversations_info": frozenset({"channels:read"}),
    # who is in the private channel a 👎 suggestion came from (its draft is shown only to them)
    "conversations_members": frozenset({"channels:read", "groups:read", "mpim:read"}),
    # where a team answer came from; Slack needs no scope for it
    "chat_getPermalink": frozenset(),
    "chat_unfurl": frozenset({"links:write"}),
    # views.* need no scope of their own: a bot token may publish Home tabs and open modals
    "views_publish": frozenset(),
    "views_open": frozenset(),
    "views_update": frozenset(),
}
#: Bolt listener arguments that call the Web API themselves
SCOPES_FOR_HELPER = {"say": frozenset({"chat:write"})}
#: event type the code listens to -> (manifest subscriptions, bot scopes)
EVENT_SUBSCRIPTIONS: dict[str, tuple[set[str], set[str]]] = {
    "app_mention": ({"app_mention"}, {"app_mentions:read"}),
    # direct messages: message.im; channel messages too once the code reads THREAD_FOLLOWUPS
    # (see `_message_subscriptions`)
    "message": ({"message.im"}, {"im:history"}),
    # Home and Messages tabs; Slack needs no scope for it
    "app_home_opened": ({"app_home_opened"}, set()),
    "link_shared": ({"link_shared"}, {"links:read"}),
    # the Stop button of a streamed answer; Slack needs no scope of its own for it
    "agent_session_stopped": ({"agent_session_stopped"}, set()),
    # uninstalls (installs by OAuth); Slack needs no scope for them
    "app_uninstalled": ({"app_uninstalled"}, set()),
    "tokens_revoked": ({"tokens_revoked"}, set()),
}
#: the follow-up listener (issue 13) hears public and private channel threads
CHANNEL_MESSAGES = ({"message.channels", "message.groups"}, {"channels:history", "groups:history"})
#: declared for listeners the lead is writing (issues 13 and 14) that bot/ does not have yet.
#: `test_awaiting_listeners_are_not_in_the_code_yet` fails as soon as the code needs one of
#: them: then delete it here, and the exact check below covers it.
AWAITING_LISTENERS: dict[str, set[str]] = {
    "events": set(),
    "scopes": set(),
}


def _manifest() -> dict[str, Any]:
    return yaml.safe_load((ROOT / "manifest.yml").read_text(encoding="utf-8"))


def _sources() -> dict[Path, str]:
    return {p: p.read_text(encoding="utf-8") for p in sorted((ROOT / "bot").rglob("*.py"))}


def _web_api_methods() -> set[str]:
    """Every AsyncWebClient method the bot's code calls or hands on (`x.chat_postMessage(`,
    `x.reactions_add if add else …`, `api_call("…")`)."""
    methods: set[str] = set()
    for source in _sources().values():
        for name in re.findall(r"\.([a-z][A-Za-z0-9]*_[A-Za-z0-9_]+)\b", source):
            if name != "api_call" and callable(getattr(AsyncWebClient, name, None)):
                methods.add(name)
        for dotted in re.findall(r"api_call\(\s*[\"']([a-z]+(?:\.[A-Za-z]+)+)[\"']", source):
            methods.add(dotted.replace(".", "_"))
    return methods


def _registrations() -> dict[str, set[str]]:
    """Bolt registrations in bot/: command, event and message listeners with literal names.

    A registration whose argument is not a literal (a regex catch-all that only acks unknown
    events) is left out.
    """
    found: dict[str, set[str]] = {
        "command": set(),
        "event": set(),
        "message": set(),
        "message_shortcut": set(),
    }
    for path, source in _sources().items():
        for node in ast.walk(ast.parse(source, str(path))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            kind = node.func.attr
            if kind not in found or not isinstance(node.func.value, ast.Name):
                continue
            if node.func.value.id != "app" or (kind != "message" and not node.args):
                continue
            if kind == "message":
                found["message"].add(ast.unparse(node))
                continue
            arg = node.args[0]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                found[kind].add(arg.value)
    return found


def _code_requirements() -> tuple[set[str], set[str], set[str]]:
    """(commands, manifest bot events, bot scopes) the code needs."""
    registered = _registrations()
    scopes: set[str] = set()
    unknown = sorted(m for m in _web_api_methods() if m not in SCOPES_FOR_METHOD)
    assert not unknown, f"add the scopes of {unknown} to SCOPES_FOR_METHOD in this test"
    for method in _web_api_methods():
        scopes |= SCOPES_FOR_METHOD[method]
    for helper, needed in SCOPES_FOR_HELPER.items():
        if any(re.search(rf"\b{helper}\(", s) for s in _sources().values()):
            scopes |= needed
    events: set[str] = set()
    event_types = set(registered["event"]) | ({"message"} if registered["message"] else set())
    for event in event_types:
        assert event in EVENT_SUBSCRIPTIONS, f"add the subscription of event {event!r} to this test"
        subscriptions, needed = EVENT_SUBSCRIPTIONS[event]
        events |= subscriptions
        scopes |= needed
    if "message" in event_types and _code_reads_thread_followups():
        events |= CHANNEL_MESSAGES[0]
        scopes |= CHANNEL_MESSAGES[1]
    if registered["command"] or registered["message_shortcut"]:
        scopes.add("commands")  # slash commands and shortcuts both need it
    return registered["command"], events, scopes


def _code_reads_thread_followups() -> bool:
    """The follow-up listener is switched by THREAD_FOLLOWUPS: code that reads the setting
    hears messages in channels, not only in DMs."""
    return any(re.search(r"\bthread_followups\b", s) for s in _sources().values())


def _manifest_lists() -> tuple[set[str], set[str]]:
    """(bot events, bot scopes) manifest.yml declares."""
    manifest = _manifest()
    return (
        set(manifest["settings"]["event_subscriptions"]["bot_events"]),
        set(manifest["oauth_config"]["scopes"]["bot"]),
    )


# --- schema ------------------------------------------------------------------------------
@pytest.mark.skipif(not SCHEMAS, reason=f"Slack's manifest schemas not found in {SHARED_SLACK}")
@pytest.mark.parametrize("schema_path", SCHEMAS, ids=lambda p: p.name)
def test_manifest_is_valid_against_slacks_schema(schema_path: Path) -> None:
    """manifest.yml passes Slack's published JSON Schema (v1 and v2)."""
    import jsonschema

    schema = json.loads(schema_path.read_text(encoding="utf-8"))
    validator = jsonschema.Draft7Validator(schema)
    errors = [
        f"{'/'.join(map(str, e.path))}: {e.message}" for e in validator.iter_errors(_manifest())
    ]
    assert [] == errors


@pytest.mark.skipif(not SCHEMAS, reason=f"Slack's manifest schemas not found in {SHARED_SLACK}")
def test_schema_check_catches_a_broken_manifest() -> None:
    """The schema check is real: an over-long app name is refused."""
    import jsonschema

    schema = json.loads(SCHEMAS[-1].read_text(encoding="utf-8"))
    broken = _manifest()
    broken["display_information"]["name"] = "x" * 36
    assert list(jsonschema.Draft7Validator(schema).iter_errors(broken))


# --- what the manifest promises ------------------------------------------------------------
def test_manifest_runs_socket_mode_with_interactivity_and_a_dm_tab() -> None:
    """Socket Mode on, buttons work, and people can DM the bot from its Messages tab."""
    manifest = _manifest()
    assert manifest["settings"]["socket_mode_enabled"] is True
    assert manifest["settings"]["interactivity"]["is_enabled"] is True
    app_home = manifest["features"]["app_home"]
    assert app_home["messages_tab_enabled"] is True
    assert app_home["messages_tab_read_only_enabled"] is False


def test_slash_command_has_a_description_and_usage_hint() -> None:
    """/gdocs shows users what it does and how to call it."""
    (command,) = _manifest()["features"]["slash_commands"]
    assert "/gdocs" == command["command"]
    assert command["description"].strip()
    assert command["usage_hint"].strip()


def test_manifest_documents_the_http_mode_request_url() -> None:
    """The comments tell an operator where HTTP mode's Request URL goes."""
    text = (ROOT / "manifest.yml").read_text(encoding="utf-8")
    assert text.count("https://HOST/slack/events") >= 3


# --- code <-> manifest <-> facts ---------------------------------------------------
def test_manifest_declares_exactly_the_commands_events_and_scopes_the_code_uses() -> None:
    """Scanning bot/ for listeners and Web API calls gives the manifest's lists exactly
    (less what is declared for listeners still being written)."""
    commands, events, scopes = _code_requirements()
    manifest = _manifest()
    declared_events, declared_scopes = _manifest_lists()
    assert commands == {c["command"] for c in manifest["features"]["slash_commands"]}
    assert events == declared_events - (AWAITING_LISTENERS["events"] - events)
    assert scopes == declared_scopes - (AWAITING_LISTENERS["scopes"] - scopes)


def _manifest_shortcuts() -> dict[str, dict[str, Any]]:
    return {s["callback_id"]: s for s in _manifest()["features"].get("shortcuts", [])}


def test_manifest_declares_exactly_the_message_shortcuts_the_code_listens_to() -> None:
    """Each `app.message_shortcut(...)` in bot/ is a `type: message` shortcut in
    manifest.yml with the name and description of SHORTCUTS, and nothing
    more is declared: both ways."""
    registered = _registrations()["message_shortcut"]
    declared = _manifest_shortcuts()
    assert registered == set(declared) == set(SHORTCUTS)
    for callback_id, (name, description) in SHORTCUTS.items():
        shortcut = declared[callback_id]
        assert ("message", name, description) == (
            shortcut["type"],
            shortcut["name"],
            shortcut["description"],
        )
        assert len(name) <= 24
        assert len(description) <= 150
        assert len(callback_id) <= 255


def test_the_shortcut_scan_is_not_vacuous() -> None:
    """The scan finds the shortcut listener, and `commands` would be needed for it alone."""
    assert ASK_SHORTCUT in _registrations()["message_shortcut"]
    assert "commands" in _code_requirements()[2]


def test_awaiting_listeners_are_declared_and_not_in_the_code_yet() -> None:
    """Each event and scope declared ahead of its listener is in manifest.yml and not yet
    needed by bot/ (once it is, it leaves AWAITING_LISTENERS and the exact check covers it)."""
    _, events, scopes = _code_requirements()
    declared_events, declared_scopes = _manifest_lists()
    assert AWAITING_LISTENERS["events"] <= declared_events
    assert AWAITING_LISTENERS["scopes"] <= declared_scopes
    assert set() == AWAITING_LISTENERS["events"] & events, "wired now: drop from the list"
    assert set() == AWAITING_LISTENERS["scopes"] & scopes, "wired now: drop from the list"


def test_manifest_facts_match_the_manifest() -> None:
    """bot/slack/py (what listeners rely on) agrees with manifest.yml."""
    manifest = _manifest()
    assert set(COMMANDS) == {c["command"] for c in manifest["features"]["slash_commands"]}
    assert set(BOT_EVENTS) == set(manifest["settings"]["event_subscriptions"]["bot_events"])
    assert set(BOT_SCOPES) == set(manifest["oauth_config"]["scopes"]["bot"])
    interactivity = INTERACTIVITY
    assert interactivity == manifest["settings"]["interactivity"]["is_enabled"]
    assert list(UNFURL_DOMAINS) == manifest["features"]["unfurl_domains"]


def test_every_event_and_scope_says_what_needs_it() -> None:
    """Each declared event is one a listener handles (or is awaited), and each scope names
    the calls or events that need it, so an admin can see why the app asks for it."""
    known_events = {e for subscriptions, _ in EVENT_SUBSCRIPTIONS.values() for e in subscriptions}
    assert set(BOT_EVENTS) <= known_events | CHANNEL_MESSAGES[0]
    needed = {s for _, scopes in EVENT_SUBSCRIPTIONS.values() for s in scopes}
    needed |= CHANNEL_MESSAGES[1] | {"commands"}
    needed |= {s for scopes in SCOPES_FOR_METHOD.values() for s in scopes}
    needed |= {s for scopes in SCOPES_FOR_HELPER.values() for s in scopes}
    assert set(BOT_SCOPES) <= needed
    assert all(why.strip() for why in BOT_SCOPES.values())


# --- agent view, Home tab and link previews --------------------------------------------------
def test_agent_view_prompts_and_description_are_the_bots_own() -> None:
    """The Messages tab's prompts are the ones the bot sends itself (`suggested_prompts`);
    both keep within Slack's limits: a description ≤ 300 characters, ≤ 4 prompts."""
    agent_view = _manifest()["features"]["agent_view"]
    assert len(agent_view["agent_description"]) <= 300
    assert suggested_prompts() == agent_view["suggested_prompts"]
    assert 1 <= len(agent_view["suggested_prompts"]) <= 4
    for prompt in agent_view["suggested_prompts"]:
        assert prompt["title"].strip()
        assert prompt["message"].strip()


def test_home_tab_is_enabled_next_to_the_messages_tab() -> None:
    """People see the Home tab and can still DM the bot."""
    app_home = _manifest()["features"]["app_home"]
    assert app_home["home_tab_enabled"] is True
    assert app_home["messages_tab_enabled"] is True


def test_unfurl_domains_are_five_documentation_hosts_the_previews_understand() -> None:
    """At most five distinct domains (Slack's limit), each a host of the documentation corpus
    whose page links the preview code turns into document names."""
    domains = _manifest()["features"]["unfurl_domains"]
    assert len(domains) <= 5
    assert len(set(domains)) == len(domains)
    for domain in domains:
        assert domain in CORPUS_HOSTS
        assert doc_name_for_url(f"https://{domain}/some/page") == f"documents/{domain}/some/page"


@pytest.mark.skipif(not SCHEMAS, reason=f"Slack's manifest schemas not found in {SHARED_SLACK}")
def test_schema_check_catches_too_many_prompts_and_domains() -> None:
    """Slack's schema itself refuses a fifth prompt and a sixth unfurl domain."""
    import jsonschema

    schema = json.loads(SCHEMAS[0].read_text(encoding="utf-8"))
    broken = _manifest()
    broken["features"]["agent_view"]["suggested_prompts"] *= 2
    broken["features"]["unfurl_domains"].append("web.dev")
    messages = [e.message for e in jsonschema.Draft7Validator(schema).iter_errors(broken)]
    assert len(messages) == 2, messages


def test_scanner_sees_the_calls_it_must_see() -> None:
    """The scan is not vacuous: it finds the answer path's Web API calls and listeners."""
    assert {"chat_postMessage", "auth_test"} <= _web_api_methods()
    registered = _registrations()
    assert "/gdocs" in registered["command"]
    assert "app_mention" in registered["event"]


# --- the README's Slack-app section ------------------------------------------------------------
def _readme_slack_list(label: str) -> str:
    """The text of the README's `- **label:**` bullet in its Slack-app section."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.partition("\n## Slack app\n")[2].partition("\n## ")[0]
    match = re.search(
        rf"^\s*- \*\*{re.escape(label)}:\*\*(.*?)(?=^\s*- |^\s*$)", section, re.M | re.S
    )
    assert match, f"README's Slack-app section has no '- **{label}:**' bullet"
    return match.group(1)


def _named(text: str) -> set[str]:
    return set(re.findall(r"`([^`\s]+)`", text))


def test_readme_lists_exactly_the_manifests_scopes_events_and_shortcuts() -> None:
    """What the README tells an admin the app asks for is what manifest.yml declares, both
    ways: every bot scope and event by name, the slash command and each shortcut's name."""
    declared_events, declared_scopes = _manifest_lists()
    assert declared_scopes == _named(_readme_slack_list("Bot scopes"))
    assert declared_events == _named(_readme_slack_list("Events"))
    entry_points = _readme_slack_list("Command and shortcut")
    assert set(COMMANDS) == _named(entry_points)
    for shortcut in _manifest_shortcuts().values():
        assert f"**{shortcut['name']}**" in entry_points
