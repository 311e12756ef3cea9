"""The installed `gdocs-bot` console script, run as a subprocess against the loopback fakes:
Markdown and JSON output, exit codes, one-line errors, and `check`'s table."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fakes.bot_process import subprocess_env
from tests.fakes.mcp_servers import FakeDeveloperKnowledge, FakePay
from tests.fakes.oauth_token import FakeTokenServer
from tests.fakes.slack_api import FakeSlack
from tests.fakes.upstream import CLOSED_URL

BUCKETS_URL = "https://docs.cloud.google.com/storage/docs/creating-buckets"
BUCKETS = "documents/docs.cloud.google.com/storage/docs/creating-buckets"
PRICING = "documents/firebase.google.com/docs/firestore/pricing"


def _command() -> list[str]:
    script = shutil.which("gdocs-bot") or str(Path(sys.executable).with_name("gdocs-bot"))
    return [script] if Path(script).exists() else [sys.executable, "-m", "bot"]


def gdocs(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """Run the console script with only `env` configured: no metadata server, the remote
    URLs it does not set closed, and sockets refused beyond loopback (see `subprocess_env`)."""
    base = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(cwd),
        "MCP_MAX_RETRIES": "0",
        "MCP_TIMEOUT_SECONDS": "10",
        # under `pytest --cov` (patch = subprocess) the CLI is measured too
        **{k: v for k, v in os.environ.items() if k.startswith("COVERAGE_")},
    }
    environment = subprocess_env(base, env, cwd)
    return subprocess.run(
        [*_command(), *args], cwd=cwd, env=environment, capture_output=True, text=True, timeout=60
    )


def _dk_env(server: FakeDeveloperKnowledge) -> dict[str, str]:
    return {"GOOGLE_API_KEY": "test-key", "DEVELOPER_KNOWLEDGE_MCP_URL": server.url}


def _one_clean_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert 1 == len(lines), stderr
    assert "Traceback" not in stderr
    return lines[0]


def test_ask_prints_the_answer_then_numbered_sources(
    dk_server: FakeDeveloperKnowledge, tmp_path: Path
) -> None:
    """The answer's Markdown (its command marked as found in the cited page), then its
    sources with titles and URLs."""
    dk_server.answers["How do I create a bucket?"] = (
        "Run `gcloud storage buckets create`.",
        [BUCKETS, PRICING],
    )
    result = gdocs(
        tmp_path, "ask", "How", "do", "I", "create", "a", "bucket?", **_dk_env(dk_server)
    )
    assert 0 == result.returncode, result.stderr
    assert (
        "Run `gcloud storage buckets create`.\n"
        "> ✓ `gcloud storage buckets create` — in source 1\n\n"
        "Sources:\n"
        f"1. [Create buckets]({BUCKETS_URL})\n"
        "2. [Cloud Firestore pricing](https://firebase.google.com/docs/firestore/pricing)\n"
    ) == result.stdout
    assert "" == result.stderr


def test_ask_json_is_the_answer_model(dk_server: FakeDeveloperKnowledge, tmp_path: Path) -> None:
    """--json (before or after the command) prints the Answer as JSON."""
    for args in (["--json", "ask", "Create buckets"], ["ask", "Create buckets", "--json"]):
        result = gdocs(tmp_path, *args, **_dk_env(dk_server))
        assert 0 == result.returncode, result.stderr
        data = json.loads(result.stdout)
        assert ("answer", "Create buckets") == (data["kind"], data["query"])
        assert BUCKETS_URL == data["references"][0]["uri"]


def test_ask_marks_a_command_the_cited_pages_do_not_have(
    dk_server: FakeDeveloperKnowledge, tmp_path: Path
) -> None:
    """A misspelled flag is marked ⚠ under its block, naming the command, and no count
    follows to say otherwise; --json has every snippet's check."""
    dk_server.answers["How do I make a bucket?"] = (
        "```sh\ngcloud storage buckets create gs://my-bucket\n"
        "gcloud storage buckets create gs://my-bucket --locaton=US\n```\n",
        [BUCKETS],
    )
    text = gdocs(tmp_path, "ask", "How do I make a bucket?", **_dk_env(dk_server))
    as_json = gdocs(tmp_path, "ask", "How do I make a bucket?", "--json", **_dk_env(dk_server))

    assert 0 == text.returncode, text.stderr
    assert (
        "```\n"
        "> ✓ `gcloud storage buckets create` — in source 1\n"
        "> ⚠ `gcloud storage buckets create` — `--locaton` is not in the cited pages\n\n"
        "Sources:\n"
    ) in text.stdout
    checks = json.loads(as_json.stdout)["verification"]
    assert "checked" == checks["status"]
    assert [("found", []), ("partly", ["--locaton"])] == [
        (s["result"], s["missing"]) for s in checks["snippets"]
    ]
    assert BUCKETS_URL == checks["snippets"][0]["uri"]


def test_ask_out_of_quota_prints_the_note_and_search_hits(
    dk_server: FakeDeveloperKnowledge, tmp_path: Path
) -> None:
    """The quota fallback says why it shows search results (this 429 names no number: the
    note names none either)."""
    dk_server.quota_exhausted = "http"
    result = gdocs(tmp_path, "ask", "Create buckets", **_dk_env(dk_server))
    assert 0 == result.returncode, result.stderr
    assert result.stdout.startswith("> Note: Today's generated answers are used up")
    assert f"1. **Create buckets**\n   {BUCKETS_URL}\n   Use" in result.stdout
    assert "" == result.stderr


def test_search_prints_each_hits_title_url_and_snippet(
    dk_server: FakeDeveloperKnowledge, tmp_path: Path
) -> None:
    """One numbered entry per document."""
    result = gdocs(tmp_path, "search", "Firestore", "bills", **_dk_env(dk_server))
    assert 0 == result.returncode, result.stderr
    assert (
        "1. **Cloud Firestore pricing**\n"
        "   https://firebase.google.com/docs/firestore/pricing\n"
        "   Firestore bills reads, writes and deletes.\n"
    ) == result.stdout


def test_pay_with_oauth_searches_pay_in_the_language(pay_server: FakePay, tmp_path: Path) -> None:
    """Pay with a service-account key file: Pay's results, asked in --language; even at
    LOG_LEVEL=DEBUG the OAuth token is in neither stdout nor stderr."""
    tokens = FakeTokenServer().start()
    tokens.tokens.append("pay-token")
    try:
        key_file = tokens.service_account_file(tmp_path)
        result = gdocs(
            tmp_path,
            "pay",
            "PaymentDataRequest",
            "--language",
            "it-IT",
            GOOGLE_APPLICATION_CREDENTIALS=str(key_file),
            GOOGLE_CLOUD_PROJECT="test-project",
            PAY_MCP_URL=pay_server.url,
            LOG_LEVEL="DEBUG",
        )
    finally:
        tokens.stop()
    assert 0 == result.returncode, result.stderr
    assert result.stdout.startswith("1. **PaymentDataRequest**\n")
    assert "[it-IT]" in result.stdout
    assert "Bearer pay-token" == pay_server.calls[0].headers["authorization"]
    assert 1 == tokens.requests  # the token really was fetched, so there was one to leak
    assert "pay-token" not in result.stdout + result.stderr


def test_pay_without_oauth_says_so(dk_server: FakeDeveloperKnowledge, tmp_path: Path) -> None:
    """No Pay credentials: general results under a note naming the settings."""
    result = gdocs(tmp_path, "pay", "buckets", **_dk_env(dk_server))
    assert 0 == result.returncode, result.stderr
    assert result.stdout.startswith("> Note: Google Pay & Wallet search is not configured")


def test_doc_prints_whole_documents_by_url_or_name(
    dk_server: FakeDeveloperKnowledge, tmp_path: Path
) -> None:
    """Each document in full, in the order asked, with its source."""
    result = gdocs(tmp_path, "doc", BUCKETS_URL, PRICING, **_dk_env(dk_server))
    assert 0 == result.returncode, result.stderr
    assert (
        "# Create buckets\n\nUse `gcloud storage buckets create gs://NAME`.\n\n## Console\n\n"
        "Click **Create**."
    ) in result.stdout
    assert result.stdout.index("# Create buckets") < result.stdout.index("# Pricing")
    assert "Source: https://firebase.google.com/docs/firestore/pricing" in result.stdout


def test_doc_json_lists_the_documents(dk_server: FakeDeveloperKnowledge, tmp_path: Path) -> None:
    """--json gives the documents as a JSON list."""
    result = gdocs(tmp_path, "doc", PRICING, "--json", **_dk_env(dk_server))
    assert 0 == result.returncode, result.stderr
    assert [("Cloud Firestore pricing", PRICING)] == [
        (d["title"], d["name"]) for d in json.loads(result.stdout)
    ]


def test_doc_output_carries_no_terminal_escapes(
    dk_server: FakeDeveloperKnowledge, tmp_path: Path
) -> None:
    """Escape sequences in untrusted doc content never reach the terminal."""
    name = "documents/web.dev/articles/evil"
    dk_server.add_document(name, "Evil", "# Evil\n\n\x1b]0;owned\x07\x1b[2Jtext")
    result = gdocs(tmp_path, "doc", name, **_dk_env(dk_server))
    assert 0 == result.returncode, result.stderr
    assert "\x1b" not in result.stdout
    assert "\x07" not in result.stdout
    assert "text" in result.stdout


@pytest.mark.parametrize("question", ["", "   "])
def test_empty_question_exits_2_with_one_line(
    dk_server: FakeDeveloperKnowledge, tmp_path: Path, question: str
) -> None:
    """Nothing to ask is a usage error, and the server hears nothing."""
    result = gdocs(tmp_path, "ask", question, **_dk_env(dk_server))
    assert 2 == result.returncode
    assert "empty" in _one_clean_line(result.stderr)
    assert [] == dk_server.requests


def test_missing_arguments_exit_2(tmp_path: Path) -> None:
    """argparse usage errors exit 2."""
    assert 2 == gdocs(tmp_path, "ask").returncode
    assert 2 == gdocs(tmp_path, "frobnicate").returncode


def test_not_a_document_exits_2(dk_server: FakeDeveloperKnowledge, tmp_path: Path) -> None:
    """`doc` with something that is not a docs URL or name: exit 2, one line."""
    result = gdocs(tmp_path, "doc", "https://example.com/../etc/passwd", **_dk_env(dk_server))
    assert 2 == result.returncode
    assert "not a documentation page" in _one_clean_line(result.stderr)


def test_invalid_setting_exits_2_with_one_line(tmp_path: Path) -> None:
    """A malformed setting is named on one line, exit 2."""
    result = gdocs(tmp_path, "search", "x", GOOGLE_API_KEY="k", MCP_TIMEOUT_SECONDS="soon")
    assert 2 == result.returncode
    assert _one_clean_line(result.stderr).startswith("gdocs-bot: MCP_TIMEOUT_SECONDS:")


def test_no_credentials_exits_2_naming_the_setting(tmp_path: Path) -> None:
    """Without GOOGLE_API_KEY or OAuth nothing is called: exit 2 and what to set."""
    result = gdocs(tmp_path, "ask", "hello there")
    assert 2 == result.returncode
    assert "GOOGLE_API_KEY" in _one_clean_line(result.stderr)


def test_settings_come_from_dotenv_in_the_working_directory(
    dk_server: FakeDeveloperKnowledge, tmp_path: Path
) -> None:
    """`.env` in the working directory configures the CLI."""
    (tmp_path / ".env").write_text(
        f"GOOGLE_API_KEY=test-key\nDEVELOPER_KNOWLEDGE_MCP_URL={dk_server.url}\n", encoding="utf-8"
    )
    result = gdocs(tmp_path, "search", "Firestore")
    assert 0 == result.returncode, result.stderr


def test_wrong_api_key_exits_1_with_one_line_and_no_key(
    dk_server: FakeDeveloperKnowledge, tmp_path: Path
) -> None:
    """An upstream refusal: exit 1, one line naming the setting, the key nowhere."""
    key = "AIzaSyNotTheRightKey0123456789abcdefghi"
    result = gdocs(
        tmp_path,
        "ask",
        "Create buckets",
        GOOGLE_API_KEY=key,
        DEVELOPER_KNOWLEDGE_MCP_URL=dk_server.url,
    )
    assert 1 == result.returncode
    assert "GOOGLE_API_KEY" in _one_clean_line(result.stderr)
    assert key not in result.stderr + result.stdout


def test_unreachable_server_exits_1_with_one_line(tmp_path: Path) -> None:
    """Connection refused: exit 1 and one line saying so."""
    result = gdocs(
        tmp_path, "search", "buckets", GOOGLE_API_KEY="k", DEVELOPER_KNOWLEDGE_MCP_URL=CLOSED_URL
    )
    assert 1 == result.returncode
    assert "cannot connect" in _one_clean_line(result.stderr)


def test_check_prints_what_works_and_what_to_fix(
    dk_server: FakeDeveloperKnowledge, slack: FakeSlack, tmp_path: Path
) -> None:
    """DK tools and a probe search work, Pay is optional, Slack's auth.test passes: exit 0."""
    result = gdocs(
        tmp_path,
        "check",
        SLACK_BOT_TOKEN="xoxb-test-token",
        SLACK_SIGNING_SECRET="secret",
        SLACK_API_URL=slack.url,
        **_dk_env(dk_server),
    )
    assert 0 == result.returncode, result.stdout + result.stderr
    rows = {line.split("  ")[0]: line for line in result.stdout.splitlines()}
    assert rows["CHECK"].split() == ["CHECK", "STATUS", "DETAIL"]
    assert "ok" in rows["developer knowledge"]
    assert "answer_query" in rows["developer knowledge"]
    assert "ok" in rows["dk search"]
    assert "not configured" in rows["google pay"]
    assert " ok " in rows["slack"]
    assert "@gdocs" in rows["slack"]
    assert 1 == len(slack.calls_to("auth.test"))
    assert "xoxb-test-token" not in result.stdout


def test_check_fails_when_developer_knowledge_fails(slack: FakeSlack, tmp_path: Path) -> None:
    """DK unreachable and Slack refusing the token: both marked FAIL with the fix, exit 1."""
    slack.auth_ok = False
    result = gdocs(
        tmp_path,
        "check",
        GOOGLE_API_KEY="k",
        DEVELOPER_KNOWLEDGE_MCP_URL=CLOSED_URL,
        SLACK_BOT_TOKEN="xoxb-test-token",
        SLACK_API_URL=slack.url,
    )
    assert 1 == result.returncode
    rows = {line.split("  ")[0]: line for line in result.stdout.splitlines()}
    assert "FAIL" in rows["developer knowledge"]
    assert "cannot connect" in rows["developer knowledge"]
    assert "FAIL" in rows["slack"]
    assert "SLACK_BOT_TOKEN" in rows["slack"]


def test_check_names_the_url_setting_of_a_server_it_cannot_reach(
    dk_server: FakeDeveloperKnowledge, tmp_path: Path
) -> None:
    """Nothing listens at PAY_MCP_URL (Developer Knowledge closed too, in a second run): the
    row says it cannot connect to that URL and names the setting to fix, not "try again"."""
    tokens = FakeTokenServer().start()
    tokens.tokens.append("pay-token")
    try:
        oauth = {
            "GOOGLE_APPLICATION_CREDENTIALS": str(tokens.service_account_file(tmp_path)),
            "GOOGLE_CLOUD_PROJECT": "test-project",
        }
        pay = gdocs(tmp_path, "check", PAY_MCP_URL=CLOSED_URL, **oauth, **_dk_env(dk_server))
    finally:
        tokens.stop()
    dk = gdocs(tmp_path, "check", GOOGLE_API_KEY="k", DEVELOPER_KNOWLEDGE_MCP_URL=CLOSED_URL)
    for result, row, setting in (
        (pay, "google pay", "PAY_MCP_URL"),
        (dk, "developer knowledge", "DEVELOPER_KNOWLEDGE_MCP_URL"),
    ):
        line = {line.split("  ")[0]: line for line in result.stdout.splitlines()}[row]
        assert "FAIL" in line, result.stdout + result.stderr
        assert f"cannot connect to {CLOSED_URL} — check {setting} and the network" in line
        assert "try again" not in line


def test_ask_names_the_url_setting_of_a_server_it_cannot_reach(tmp_path: Path) -> None:
    """`ask` at a closed Developer Knowledge URL: one line naming the setting to fix, not
    "try again in a minute" (which no waiting would make true)."""
    result = gdocs(tmp_path, "ask", "how do I create a bucket?", GOOGLE_API_KEY="k",
                   DEVELOPER_KNOWLEDGE_MCP_URL=CLOSED_URL)  # fmt: skip
    assert 1 == result.returncode
    said = "cannot connect to the server — check DEVELOPER_KNOWLEDGE_MCP_URL and the network"
    assert f"gdocs-bot: {said}\n" == result.stderr


def test_check_json_reports_each_check(dk_server: FakeDeveloperKnowledge, tmp_path: Path) -> None:
    """check --json: overall ok and one entry per check."""
    result = gdocs(tmp_path, "check", "--json", **_dk_env(dk_server))
    assert 0 == result.returncode, result.stderr
    data = json.loads(result.stdout)
    assert data["ok"] is True
    assert {
        "configuration",
        "developer knowledge",
        "dk search",
        "google pay",
        "slack",
        "state store",
        "answer quota",
    } == {c["check"] for c in data["checks"]}


def test_serve_hands_the_settings_to_the_runtime(tmp_path: Path) -> None:
    """`serve` without Slack settings: the runtime refuses to start, naming them (exit 2)."""
    result = gdocs(tmp_path, "serve", GOOGLE_API_KEY="k")
    assert 2 == result.returncode
    assert "SLACK_BOT_TOKEN" in result.stderr
    assert "Traceback" not in result.stderr


def test_subprocesses_cannot_reach_beyond_loopback(tmp_path: Path) -> None:
    """The environment every test subprocess gets refuses a connection to 192.0.2.1."""
    script = (
        "import socket\n"
        "for connect in ('connect', 'connect_ex'):\n"
        "    sock = socket.socket()\n"
        "    sock.settimeout(3)\n"
        "    try:\n"
        "        getattr(sock, connect)(('192.0.2.1', 443))\n"
        "    except ConnectionRefusedError as exc:\n"
        "        print(connect, 'refused:', exc)\n"
        "    finally:\n"
        "        sock.close()\n"
    )
    environment = subprocess_env({"PATH": os.environ.get("PATH", "")}, {}, tmp_path)
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert 0 == result.returncode, result.stderr
    assert [
        "connect refused: tests may only reach loopback, not ('192.0.2.1', 443)",
        "connect_ex refused: tests may only reach loopback, not ('192.0.2.1', 443)",
    ] == result.stdout.splitlines()


def test_help_lists_every_command(tmp_path: Path) -> None:
    """--help exits 0 and names the commands."""
    result = gdocs(tmp_path, "--help")
    assert 0 == result.returncode
    for command in ("ask", "search", "pay", "doc", "check", "serve"):
        assert command in result.stdout
