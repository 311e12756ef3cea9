"""Products a question or a channel can be limited to (pure): short names for the corpus's
sites (`data_source` in Developer Knowledge's REST `filter`), and the words that name them."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from bot.models import Scope


@dataclass(frozen=True)
class Product:
    name: str
    #: how people read it on an answer: "Firebase docs only"
    label: str
    hosts: tuple[str, ...]


#: the corpus (../shared/reference/google-mcp.md), one short name each. `maps` is also
#: developers.google.com: the Maps APIs' own docs live there (developers.google.com/maps),
#: mapsplatform.google.com is the product's overview, and a `filter` matches a whole site
#: only. It is not labelled "Maps" for that: its answers read "developers.google.com and
#: Google Maps Platform docs only", which is what they are.
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
    Product("maps", "Google Maps Platform", ("mapsplatform.google.com", "developers.google.com")),
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
#: each host's first product (developers.google.com: `developers`, not `maps`)
BY_HOST = {host: p for p in reversed(PRODUCTS) for host in p.hosts}
#: other words people use for a product
ALIASES = {
    "gcp": "cloud",
    "googlecloud": "cloud",
    "golang": "go",
    "gemini": "ai",
    "webdev": "web",
    "tf": "tensorflow",
    "googlemaps": "maps",
}
#: the clearing word
ALL = "all"
#: Developer Knowledge refuses a longer `filter`
MAX_FILTER_CHARS = 500


class ScopeError(ValueError):
    """Words that name no scope: `unknown` is the first unknown word; None: too many."""

    def __init__(self, unknown: str | None = None) -> None:
        super().__init__(f"unknown product {unknown!r}" if unknown else "too many products")
        self.unknown = unknown


#: a site Slack turned into a link in a message: `<http://web.dev|web.dev>`
_LINK_RE = re.compile(r"<(?:[a-z]+://)?([^|>/]*)[^|>]*(?:\|[^>]*)?>", re.IGNORECASE)


def product_words(text: str) -> list[str]:
    """`firebase,android  chrome` → its words (commas or spaces between them)."""
    return [word for word in re.split(r"[,\s]+", _LINK_RE.sub(r"\1", text)) if word]


def scope_of(names: Iterable[str]) -> Scope:
    """The hosts that `names` (short names, aliases or corpus hosts, any case, commas
    allowed) stand for; `all` is every product, (). ScopeError: an unknown word, or more
    products than a `filter` holds."""
    hosts: set[str] = set()
    for word in (w.lower() for name in names for w in product_words(name)):
        if word == ALL:
            return ()
        product = BY_NAME.get(ALIASES.get(word, word))
        if product is None and word not in BY_HOST:
            raise ScopeError(word)
        hosts.update(product.hosts if product else (word,))
    scope = tuple(sorted(hosts))
    if len(filter_for(scope)) > MAX_FILTER_CHARS:
        raise ScopeError()
    return scope


def _whole(scope: Scope) -> list[Product | str]:
    """Each host's product when all its hosts are in `scope`, else the host itself; once."""
    seen: dict[Product | str, None] = {}
    for host in scope:
        product = BY_HOST.get(host)
        whole = product is not None and set(product.hosts) <= set(scope)
        seen.setdefault(product if whole and product else host)
    return list(seen)


def names(scope: Scope) -> list[str]:
    """Words that give `scope` back through `scope_of` ("firebase", "docs.cloud.google.com")."""
    return [p.name if isinstance(p, Product) else p for p in _whole(scope)]


def labels(scope: Scope) -> list[str]:
    """Each product of `scope` once, by its label ("Firebase", "Android"); a host as is when
    its product is not all there (or unknown: a scope stored by another version)."""
    return [p.label if isinstance(p, Product) else p for p in _whole(scope)]


def filter_for(scope: Scope) -> str:
    """The REST `filter` limiting answers and search to `scope` ("" for all products)."""
    return " OR ".join(f'data_source = "{host}"' for host in scope)
