"""Product words (`in:firebase`, `/gdocs channel products …`) → the `data_source` hosts of
Developer Knowledge's REST `filter`, and back to the words and labels people read."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.products import (
    ALIASES,
    BY_HOST,
    MAX_FILTER_CHARS,
    PRODUCTS,
    ScopeError,
    filter_for,
    labels,
    names,
    scope_of,
)
from bot.render import scope_line, scope_note, scope_refusal

CORPUS = {
    # ../shared/reference/google-mcp.md, "Corpus"
    "developer.android.com", "firebase.google.com", "docs.cloud.google.com", "cloud.google.com",
    "developer.chrome.com", "web.dev", "go.dev", "dart.dev", "docs.flutter.dev",
    "developers.google.com", "ai.google.dev", "tensorflow.org", "fuchsia.dev", "genkit.dev",
    "adk.dev", "geminicli.com", "antigravity.google", "docs.apigee.com",
    "developers.home.google.com", "mapsplatform.google.com", "knowledge.workspace.google.com",
}  # fmt: skip


@pytest.mark.parametrize(
    ("words", "scope"),
    [
        (["firebase"], ("firebase.google.com",)),
        (["cloud"], ("cloud.google.com", "docs.cloud.google.com")),
        (["gcp"], ("cloud.google.com", "docs.cloud.google.com")),
        (["android", "firebase"], ("developer.android.com", "firebase.google.com")),
        (["firebase,android"], ("developer.android.com", "firebase.google.com")),
        (["Firebase,  ANDROID"], ("developer.android.com", "firebase.google.com")),
        (["firebase", "firebase.google.com"], ("firebase.google.com",)),
        (["firebase.google.com"], ("firebase.google.com",)),
        (["docs.cloud.google.com"], ("docs.cloud.google.com",)),
        (["<http://firebase.google.com|firebase.google.com>"], ("firebase.google.com",)),
        (["golang"], ("go.dev",)),
        (["gemini"], ("ai.google.dev",)),
        (["maps"], ("developers.google.com", "mapsplatform.google.com")),
        (["all"], ()),
        (["ALL"], ()),
        (["firebase", "all"], ()),
        ([], ()),
    ],
)
def test_product_words_name_their_sites(words: list[str], scope: tuple[str, ...]) -> None:
    """Short names, aliases and the corpus's own hosts, any case, commas or spaces; `all`
    clears (whatever else is named with it)."""
    assert scope == scope_of(words)


@pytest.mark.parametrize(("words", "unknown"), [(["fire"], "fire"), (["android", "iOS"], "ios")])
def test_an_unknown_product_is_refused_with_the_known_names(words: list[str], unknown: str) -> None:
    with pytest.raises(ScopeError) as raised:
        scope_of(words)
    assert unknown == raised.value.unknown
    said = scope_refusal(raised.value)
    assert f"“{unknown}”" in said
    assert all(f"`{p.name}`" in said for p in PRODUCTS)
    assert said.endswith("or `all`.")
    assert ". " not in said  # one sentence


def test_a_scope_whose_filter_would_not_fit_is_refused_in_one_sentence() -> None:
    """Every product at once is over REST's 500-character filter: refused, never cut."""
    assert len(filter_for(tuple(sorted(CORPUS)))) > MAX_FILTER_CHARS
    with pytest.raises(ScopeError) as raised:
        scope_of([p.name for p in PRODUCTS])
    assert raised.value.unknown is None
    assert "name fewer" in scope_refusal(raised.value)


def test_every_corpus_site_has_a_product_and_every_product_is_of_the_corpus() -> None:
    assert CORPUS == set(BY_HOST)
    assert all(ALIASES[alias] in {p.name for p in PRODUCTS} for alias in ALIASES)


def test_developers_google_com_is_labelled_by_its_own_name_not_as_maps() -> None:
    """A filter matches whole sites: `maps` spans developers.google.com (the Maps APIs'
    docs) too, so its answers name both sites rather than claim "Maps docs only"."""
    assert "developers.google.com and Google Maps Platform docs only" == scope_line(
        scope_of(["maps"]), from_channel=False
    )
    assert ["developers.google.com"] == labels(scope_of(["developers"]))
    assert ["docs.cloud.google.com"] == labels(scope_of(["docs.cloud.google.com"]))


def test_the_filter_names_each_site() -> None:
    scope = scope_of(["firebase", "android"])
    expected = 'data_source = "developer.android.com" OR data_source = "firebase.google.com"'
    assert expected == filter_for(scope)
    assert "" == filter_for(())


@pytest.mark.parametrize(
    ("applied", "channel", "line"),
    [
        (["firebase"], [], "Firebase docs only"),
        (
            ["firebase"],
            ["firebase"],
            "Firebase docs only · change with `/gdocs channel products`",
        ),
        (["firebase"], ["android"], "Firebase docs only"),
        (["android", "chrome", "firebase"], [], "Android, Chrome and Firebase docs only"),
        (
            [],
            ["firebase"],
            "Answered from all products: this channel's limit to Firebase needs the bot's "
            "REST setting (DEVELOPER_KNOWLEDGE_API=rest).",
        ),
        ([], [], None),
    ],
)
def test_the_answers_scope_note(applied: list[str], channel: list[str], line: str | None) -> None:
    """The products said on an answer: the change hint only for the channel's own scope; a
    channel scope the MCP backend did not apply is said, not dropped silently."""
    assert line == scope_note(scope_of(applied), scope_of(channel))


def test_a_stored_host_the_bot_no_longer_knows_is_shown_escaped() -> None:
    assert "a&lt;b docs only" == scope_line(("a<b",), from_channel=False)


_WORDS = st.sampled_from(sorted({p.name for p in PRODUCTS} | set(ALIASES) | set(BY_HOST))).map(
    lambda w: w.upper() if len(w) % 2 else w
)


@given(st.lists(_WORDS, max_size=8))
def test_scope_names_give_the_same_scope_back(words: list[str]) -> None:
    """parse → names → parse is stable, and the labels name each product once."""
    try:
        scope = scope_of(words)
    except ScopeError:
        return  # too many for one filter
    assert scope == scope_of(names(scope))
    assert scope == scope_of([",".join(names(scope))])
    assert len(set(labels(scope))) == len(labels(scope))
    assert len(filter_for(scope)) <= MAX_FILTER_CHARS
