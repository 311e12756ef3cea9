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

from bot.slack import manifest_facts

ROOT = Path(__file__).resolve().parents[1]
SHARED_SLACK = ROOT.parent / "shared" / "slack"
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
}
#: Bolt listener arguments that call the Web API themselves
SCOPES_FOR_HELPER = {"say": frozenset({"chat:write"})}
#: event type the code listens to -> (manifest subscriptions, bot scope)
EVENT_SUBSCRIPTIONS = {
    "app_mention": ({"app_mention"}, "app_mentions:read"),
    # the bot answers direct messages only: message.im, nothing in channels
    "message": ({"message.im"}, "im:history"),
}


def _manifest() -> dict[str, Any]:
    return yaml.safe_load((ROOT / "manifest.yml").read_text(encoding="utf-8"))


def _sources() -> dict[Path, str]:
    return {p: p.read_text(encoding="utf-8") for p in sorted((ROOT / "bot").rglob("*.py"))}


def _web_api_methods() -> set[str]:
    """Every AsyncWebClient method the bot's code calls (`x.chat_postMessage(`, `api_call("…")`)."""
    methods: set[str] = set()
    for source in _sources().values():
        for name in re.findall(r"\.([a-z][A-Za-z0-9]*_[A-Za-z0-9_]+)\(", source):
            if name != "api_call" and callable(getattr(AsyncWebClient, name, None)):
                methods.add(name)
        for dotted in re.findall(r"api_call\(\s*[\"']([a-z]+(?:\.[A-Za-z]+)+)[\"']", source):
            methods.add(dotted.replace(".", "_"))
    return methods


def _registrations() -> dict[str, set[str]]:
    """Bolt registrations in bot/: command, event and message listeners with literal names.

    A registration whose argument is not a literal (a regex catch-all that only acks unknown
    events, or a loop over `manifest_facts.COMMANDS`) is resolved as what it refers to.
    """
    found: dict[str, set[str]] = {"command": set(), "event": set(), "message": set()}
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
            elif kind == "command" and "COMMANDS" in source:
                found[kind].update(manifest_facts.COMMANDS)
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
        subscriptions, scope = EVENT_SUBSCRIPTIONS[event]
        events |= subscriptions
        scopes.add(scope)
    if registered["command"]:
        scopes.add("commands")
    return registered["command"], events, scopes


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


# --- code <-> manifest <-> manifest_facts ---------------------------------------------------
def test_manifest_declares_exactly_the_commands_events_and_scopes_the_code_uses() -> None:
    """Scanning bot/ for listeners and Web API calls gives the manifest's lists exactly."""
    commands, events, scopes = _code_requirements()
    manifest = _manifest()
    assert commands == {c["command"] for c in manifest["features"]["slash_commands"]}
    assert events == set(manifest["settings"]["event_subscriptions"]["bot_events"])
    assert scopes == set(manifest["oauth_config"]["scopes"]["bot"])


def test_manifest_facts_match_the_manifest() -> None:
    """bot/slack/manifest_facts.py (what listeners rely on) agrees with manifest.yml."""
    manifest = _manifest()
    assert set(manifest_facts.COMMANDS) == {
        c["command"] for c in manifest["features"]["slash_commands"]
    }
    assert set(manifest_facts.BOT_EVENTS) == set(
        manifest["settings"]["event_subscriptions"]["bot_events"]
    )
    assert set(manifest_facts.BOT_SCOPES) == set(manifest["oauth_config"]["scopes"]["bot"])
    interactivity = getattr(manifest_facts, "INTERACTIVITY", True)
    assert interactivity == manifest["settings"]["interactivity"]["is_enabled"]


def test_scanner_sees_the_calls_it_must_see() -> None:
    """The scan is not vacuous: it finds the answer path's Web API calls and listeners."""
    assert {"chat_postMessage", "auth_test"} <= _web_api_methods()
    registered = _registrations()
    assert "/gdocs" in registered["command"]
    assert "app_mention" in registered["event"]
