"""The deployment files say what the README promises: Docker Compose (the bot with Valkey,
and the single-instance variant on SQLite) and the Cloud Run service. No engine runs them
here, so they are parsed and checked against each other and against the Dockerfile."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.test_dockerfile import _stages

ROOT = Path(__file__).resolve().parents[1]
COMPOSE = ROOT / "docker-compose.yml"
COMPOSE_SINGLE = ROOT / "docker-compose.single.yml"
CLOUD_RUN = ROOT / "deploy" / "cloudrun.yaml"
SECRETS = ("SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_APP_TOKEN", "GOOGLE_API_KEY")
#: what a real credential looks like: Slack tokens, Google API keys and OAuth tokens, PEM keys,
#: a password in a Redis URL
SECRET_SHAPES = re.compile(
    r"xox[abprs]-|xapp-|AIza[0-9A-Za-z_-]{10,}|ya29\.|BEGIN [A-Z ]*PRIVATE KEY|rediss?://[^/\s@]*:[^/\s@]+@"
)


def _load(path: Path) -> dict[str, Any]:
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(document, dict), path
    return document


def _dockerfile_final_stage() -> list[tuple[str, str]]:
    return _stages()[-1]


def _exposed_port() -> int:
    (port,) = [args for keyword, args in _dockerfile_final_stage() if keyword == "EXPOSE"]
    return int(port)


def _dockerfile_healthcheck() -> list[str]:
    (check,) = [args for keyword, args in _dockerfile_final_stage() if keyword == "HEALTHCHECK"]
    command = json.loads(check[check.index("CMD") + len("CMD") :])
    assert isinstance(command, list)
    return ["CMD", *command]


def _dockerfile_env(name: str) -> str:
    envs = " ".join(args for keyword, args in _dockerfile_final_stage() if keyword == "ENV")
    match = re.search(rf"\b{name}=(\S+)", envs)
    assert match, name
    return match.group(1)


def _environment(service: dict[str, Any]) -> dict[str, str]:
    """A compose service's `environment`, as a map (compose allows a map or KEY=VALUE list)."""
    raw = service.get("environment") or {}
    if isinstance(raw, list):
        raw = dict(item.partition("=")[::2] for item in raw)
    return {str(k): str(v) for k, v in raw.items()}


def _env_files(service: dict[str, Any]) -> list[str]:
    raw = service.get("env_file") or []
    items = raw if isinstance(raw, list) else [raw]
    return [item if isinstance(item, str) else item["path"] for item in items]


def _named_volume_mounts(document: dict[str, Any], service: dict[str, Any]) -> dict[str, str]:
    """target -> named volume, for the service's mounts of volumes declared in the file."""
    declared = set(document.get("volumes") or {})
    mounts = {}
    for volume in service.get("volumes") or []:
        if isinstance(volume, str):  # short syntax, SOURCE:TARGET[:MODE]
            source, target = volume.split(":")[:2]
        else:
            source, target = volume["source"], volume["target"]
        if source in declared:
            mounts[target] = source
    return mounts


# --- Docker Compose ----------------------------------------------------------------------
@pytest.mark.parametrize("path", [COMPOSE, COMPOSE_SINGLE], ids=lambda p: p.name)
def test_compose_bot_builds_here_reads_dot_env_and_restarts(path: Path) -> None:
    """The bot is built from this checkout, takes its settings from .env, restarts unless
    stopped, and runs with a read-only root filesystem."""
    bot = _load(path)["services"]["bot"]
    assert "." == (bot["build"] if isinstance(bot["build"], str) else bot["build"]["context"])
    assert [".env"] == _env_files(bot)
    assert "unless-stopped" == bot["restart"]
    assert bot["read_only"] is True


@pytest.mark.parametrize("path", [COMPOSE, COMPOSE_SINGLE], ids=lambda p: p.name)
def test_compose_bot_health_check_is_the_images_stdlib_check_on_the_exposed_port(
    path: Path,
) -> None:
    """The health check is the Dockerfile's (python asking /healthz, no curl), and PORT and
    the published port are the image's EXPOSE."""
    bot = _load(path)["services"]["bot"]
    assert _dockerfile_healthcheck() == bot["healthcheck"]["test"]
    assert "/healthz" in " ".join(bot["healthcheck"]["test"])
    port = _exposed_port()
    assert str(port) == _environment(bot)["PORT"]
    assert [str(port)] == [str(p).rsplit(":", 1)[-1] for p in bot["ports"]]


def test_compose_replica_setup_shares_state_through_a_healthy_valkey() -> None:
    """The bot's STATE_URL names the valkey service, which has a ping health check, a named
    volume for its data and a restart policy; the bot starts once it is healthy."""
    document = _load(COMPOSE)
    bot, valkey = document["services"]["bot"], document["services"]["valkey"]
    assert re.fullmatch(r"redis://valkey:6379/\d+", _environment(bot)["STATE_URL"])
    assert {"valkey": {"condition": "service_healthy"}} == bot["depends_on"]
    assert re.fullmatch(r"(valkey/valkey|redis):\d+(\.\d+)*(-\w+)?", valkey["image"])
    assert valkey["healthcheck"]["test"][-1] == "ping"
    assert valkey["healthcheck"]["test"][-2] in ("valkey-cli", "redis-cli")
    assert "/data" in _named_volume_mounts(document, valkey)
    assert "unless-stopped" == valkey["restart"]
    assert "ports" not in valkey, "Valkey has no password: keep it off the host's ports"


def test_compose_single_instance_keeps_sqlite_on_a_named_data_volume() -> None:
    """The single-instance variant has no Valkey: STATE_URL is the image's SQLite file, on a
    named volume mounted at /data."""
    document = _load(COMPOSE_SINGLE)
    assert ["bot"] == list(document["services"])
    bot = document["services"]["bot"]
    state_url = _environment(bot).get("STATE_URL", _dockerfile_env("STATE_URL"))
    assert state_url == _dockerfile_env("STATE_URL")
    assert state_url.startswith("sqlite:////data/")
    assert "/data" in _named_volume_mounts(document, bot)


@pytest.mark.parametrize("path", [COMPOSE, COMPOSE_SINGLE, CLOUD_RUN], ids=lambda p: p.name)
def test_deploy_file_holds_no_secret(path: Path) -> None:
    """No token, key or password in the file: the secrets come from .env or Secret Manager."""
    text = path.read_text(encoding="utf-8")
    assert not SECRET_SHAPES.search(text), SECRET_SHAPES.search(text)
    if path is CLOUD_RUN:
        return
    for service in _load(path)["services"].values():
        assert not set(SECRETS) & set(_environment(service)), "inline secret setting"


# --- Cloud Run -----------------------------------------------------------------------------
def _cloud_run() -> tuple[dict[str, Any], dict[str, Any], dict[str, str]]:
    """(the revision template's annotations, its spec, its only container's env by name)."""
    service = _load(CLOUD_RUN)
    assert "serving.knative.dev/v1" == service["apiVersion"]
    assert "Service" == service["kind"]
    template = service["spec"]["template"]
    (container,) = template["spec"]["containers"]
    env = {item["name"]: item for item in container["env"]}
    return template["metadata"]["annotations"], template["spec"], env


def test_cloud_run_secrets_come_from_secret_manager() -> None:
    """The three secrets are secretKeyRef references (a secret and a version), never values."""
    _, _, env = _cloud_run()
    for name in ("SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET", "GOOGLE_API_KEY"):
        assert "value" not in env[name], name
        ref = env[name]["valueFrom"]["secretKeyRef"]
        assert ref["name"], name
        assert ref["key"], name


def test_cloud_run_keeps_cpu_allocated_and_an_instance_warm() -> None:
    """cpu-throttling "false" (answers run after the acknowledgement), min 1 instance, a
    maximum, startup boost; every annotation a string, as Knative requires."""
    annotations, spec, _ = _cloud_run()
    assert all(isinstance(value, str) for value in annotations.values()), annotations
    assert "false" == annotations["run.googleapis.com/cpu-throttling"]
    assert "true" == annotations["run.googleapis.com/startup-cpu-boost"]
    assert "1" == annotations["autoscaling.knative.dev/minScale"]
    assert int(annotations["autoscaling.knative.dev/maxScale"]) >= 1
    assert isinstance(spec["containerConcurrency"], int)
    assert spec["containerConcurrency"] > 0
    assert spec["serviceAccountName"].endswith(".iam.gserviceaccount.com")


def test_cloud_run_reaches_valkey_by_direct_vpc_egress() -> None:
    """STATE_URL is a Redis URL, reached through a Direct VPC network interface that routes
    only private ranges."""
    annotations, _, env = _cloud_run()
    assert re.fullmatch(r"rediss?://[^/\s]+:\d+/\d+", env["STATE_URL"]["value"])
    (interface,) = json.loads(annotations["run.googleapis.com/network-interfaces"])
    assert interface["network"]
    assert interface["subnetwork"]
    assert "private-ranges-only" == annotations["run.googleapis.com/vpc-access-egress"]


def test_cloud_run_settings_are_http_mode_json_logs_and_a_grace_under_10_seconds() -> None:
    """GOOGLE_CLOUD_PROJECT for OAuth, JSON logs, SHUTDOWN_GRACE_SECONDS below Cloud Run's
    10 s, and no Socket Mode token (HTTP mode)."""
    _, _, env = _cloud_run()
    assert env["GOOGLE_CLOUD_PROJECT"]["value"]
    assert "json" == env["LOG_FORMAT"]["value"]
    assert 0 < int(env["SHUTDOWN_GRACE_SECONDS"]["value"]) < 10
    assert "SLACK_APP_TOKEN" not in env
    assert "PORT" not in env, "Cloud Run sets PORT itself (to containerPort)"


def test_cloud_run_probes_ask_healthz_on_the_images_port() -> None:
    """containerPort is the Dockerfile's EXPOSE; startup and liveness probes GET /healthz on it."""
    _, spec, _ = _cloud_run()
    (container,) = spec["containers"]
    (port,) = container["ports"]
    assert _exposed_port() == port["containerPort"]
    for probe in ("startupProbe", "livenessProbe"):
        assert "/healthz" == container[probe]["httpGet"]["path"], probe
        assert port["containerPort"] == container[probe]["httpGet"].get("port"), probe


@pytest.mark.parametrize(
    "key",
    [
        "autoscaling.knative.dev/minScale",
        "autoscaling.knative.dev/maxScale",
        "run.googleapis.com/cpu-throttling",
        "containerConcurrency",
    ],
)
def test_cloud_run_scaling_and_cpu_settings_say_why(key: str) -> None:
    """Each scaling and CPU setting is preceded by a comment that gives its reason."""
    lines = CLOUD_RUN.read_text(encoding="utf-8").splitlines()
    (at,) = [i for i, line in enumerate(lines) if line.strip().startswith(f"{key}:")]
    assert lines[at - 1].strip().startswith("#"), f"no comment above {key}"
