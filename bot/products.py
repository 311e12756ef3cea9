"""Products a question or a channel can be limited to (pure): short names for the corpus's
sites (`data_source` in Developer Knowledge's REST `filter`), and the words that name them."""

from __future__ import annotations

from dataclasses import dataclass

from bot.models import Scope


@dataclass(frozen=True)
class Product:
    name: str
    #: how people read it on an answer: "Firebase docs only"
    label: str
    hosts: tuple[str, ...]


#: the corpus (../shared/reference/google-mcp.md), one short name each; the first is shown
PRODUCTS: tuple[Product, ...] = (
    Product("cloud", "Google Cloud", ("cloud.google.com", "docs.cloud.google.com")),
    Product("firebase", "Firebase", ("firebase.google.com",)),
    Product("android", "Android", ("developer.android.com",)),
    Product("chrome", "Chrome", ("developer.chrome.com",)),
    Product("web", "web.dev", ("web.dev",)),
    Product("go", "Go", ("go.dev",)),
    Product("dart", "Dart", ("dart.dev",)),
    Product("flutter", "Flutter", ("docs.flutter.dev",)),
    Product("developers", "developers.google.com", ("developers.google.com",)),
    Product("maps", "Google Maps Platform", ("mapsplatform.google.com",)),
    Product("ai", "Gemini API", ("ai.google.dev",)),
    Product("tensorflow", "TensorFlow", ("tensorflow.org",)),
    Product("fuchsia", "Fuchsia", ("fuchsia.dev",)),
    Product("genkit", "Genkit", ("genkit.dev",)),
    Product("adk", "Agent Development Kit", ("adk.dev",)),
    Product("geminicli", "Gemini CLI", ("geminicli.com",)),
    Product("antigravity", "Antigravity", ("antigravity.google",)),
    Product("apigee", "Apigee", ("docs.apigee.com",)),
    Product("home", "Google Home", ("developers.home.google.com",)),
    Product("workspace", "Google Workspace", ("knowledge.workspace.google.com",)),
)
BY_NAME = {p.name: p for p in PRODUCTS}
BY_HOST = {host: p for p in PRODUCTS for host in p.hosts}


def scope_of(names: list[str]) -> Scope:
    """The hosts of known product names (KeyError names the first unknown one)."""
    return tuple(sorted({host for name in names for host in BY_NAME[name].hosts}))


def labels(scope: Scope) -> list[str]:
    """Each product of `scope` once, by its label ("Firebase", "Android"); an unknown host as is."""
    seen: dict[str, None] = {}
    for host in scope:
        seen.setdefault(BY_HOST[host].label if host in BY_HOST else host)
    return list(seen)


def filter_for(scope: Scope) -> str:
    """The REST `filter` limiting answers and search to `scope` ("" for all products)."""
    return " OR ".join(f'data_source = "{host}"' for host in scope)
