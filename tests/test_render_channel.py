"""The pure parts of channel settings: `/gdocs channel …` words, ANSWER_CHANNELS, the texts
people read (settings, notices, the Home tab's lines) and the routing helpers the shortcut
and private channels use. Tables and hypothesis, no I/O."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st
from slack_sdk.models.blocks import Block

from bot.channels import (
    ChangeSetting,
    ChannelSettings,
    ChannelUsage,
    ShowSettings,
    UnknownProducts,
    parse_channel_ids,
    parse_channel_request,
)
from bot.errors import ConfigError
from bot.render import (
    MAX_HOME_CHANNELS,
    ChannelLine,
    HomeInput,
    render_channel_notice,
    render_channel_settings,
    render_channel_usage,
    render_home,
    render_scope_refused,
)
from bot.settings import Settings
from bot.slack.flows.routing import (
    ROOT_CONTEXT_CHARS,
    Route,
    Router,
    channel_words,
    with_channel_privacy,
    with_root_context,
)


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        ("", ShowSettings()),
        ("auto", ChangeSetting("mode", mode="auto")),
        ("AUTO", ChangeSetting("mode", mode="auto")),
        ("mentions", ChangeSetting("mode", mode="mentions")),
        ("private on", ChangeSetting("private", private=True)),
        ("private off", ChangeSetting("private", private=False)),
        ("followups anyone", ChangeSetting("followups", followups="anyone")),
        ("followups asker", ChangeSetting("followups", followups="asker")),
        ("followups off", ChangeSetting("followups", followups="off")),
        ("followups default", ChangeSetting("followups", followups=None)),
        ("help", ChannelUsage()),
        ("automatic", ChannelUsage()),
        ("private", ChannelUsage()),
        ("private maybe", ChannelUsage()),
        ("followups everyone", ChannelUsage()),
        ("auto please", ChannelUsage()),
    ],
)
def test_channel_words_table(words: str, expected: object) -> None:
    """What each `/gdocs channel …` asks for; anything unknown is the usage, never a guess."""
    assert expected == parse_channel_request(words)


@given(st.text(max_size=80))
def test_any_words_parse_to_a_request(words: str) -> None:
    """No text makes the parser raise; a change always applies to the defaults."""
    request = parse_channel_request(words)
    if isinstance(request, ChangeSetting):
        assert isinstance(request.apply(ChannelSettings()), ChannelSettings)


def test_changes_apply_one_setting_and_leave_the_others() -> None:
    """`private on` on an answer channel keeps it one; `followups default` clears only that."""
    start = ChannelSettings("auto", private=False, followups="anyone")
    assert ChannelSettings("auto", True, "anyone") == parse_channel_request("private on").apply(
        start
    )  # type: ignore[union-attr]
    cleared = parse_channel_request("followups default")
    assert isinstance(cleared, ChangeSetting)
    assert ChannelSettings("auto") == cleared.apply(start)


@pytest.mark.parametrize(
    ("text", "ids"),
    [
        ("", set()),
        ("C1", {"C1"}),
        ("C0123ABCD, G456", {"C0123ABCD", "G456"}),
        ("C1 C2", {"C1", "C2"}),
    ],
)
def test_answer_channels_are_channel_ids(text: str, ids: set[str]) -> None:
    """ANSWER_CHANNELS: comma- or space-separated C…/G… ids."""
    assert ids == set(parse_channel_ids(text))


@pytest.mark.parametrize("text", ["general", "#ask-docs", "D123", "c123", "<#C1>"])
def test_answer_channels_refuse_what_is_not_a_channel_id(text: str) -> None:
    """A name, a DM, a lower-case id or markup: the setting is refused at start-up."""
    with pytest.raises(ValueError, match="not a channel id"):
        parse_channel_ids(text)


def test_a_bad_answer_channels_setting_names_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    """load_settings: one line naming ANSWER_CHANNELS."""
    from bot.settings import load_settings

    monkeypatch.setenv("ANSWER_CHANNELS", "C1,general")
    with pytest.raises(ConfigError, match="ANSWER_CHANNELS"):
        load_settings()
    assert frozenset({"C1"}) == Settings(answer_channels="C1").answer_channel_ids


@pytest.mark.parametrize(
    ("channel", "shown"),
    [
        ("C0123", "<#C0123>"),
        ("G9", "<#G9>"),
        ("C1|x>", "this channel"),
        ("<!here>", "this channel"),
    ],
)
def test_channel_references_are_only_well_formed_ids(channel: str, shown: str) -> None:
    """Nothing but a channel id becomes `<#…>` markup."""
    msg = render_channel_settings(
        channel, ChannelSettings(), default_followups="asker", fixed_auto=False
    )
    assert msg["text"].startswith(f"Settings in {shown}: ")


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        ("auto", "turned on automatic answers here"),
        ("mentions", "turned off automatic answers here"),
        ("private on", "made my answers here private"),
        ("private off", "visible to everyone again"),
        ("followups anyone", "from anyone in the thread"),
    ],
)
def test_each_change_posts_a_notice_saying_how_to_undo_it(words: str, expected: str) -> None:
    """The notice names who switched (a well-formed id only) and the command that undoes it."""
    request = parse_channel_request(words)
    assert isinstance(request, ChangeSetting)
    notice = render_channel_notice("UANA1", request.field, request.apply(ChannelSettings()))
    assert notice["text"].startswith("<@UANA1> ")
    assert expected in notice["text"]
    assert "`/gdocs channel" in notice["text"]
    forged = render_channel_notice("<!channel>", request.field, request.apply(ChannelSettings()))
    assert forged["text"].startswith("Someone ")
    assert "<!channel>" not in forged["text"]


def test_settings_say_where_the_default_comes_from() -> None:
    """An answer channel by configuration says so; a channel without its own follow-up
    policy shows THREAD_FOLLOWUPS's, marked as the default; the blocks are valid."""
    msg = render_channel_settings(
        "C1", ChannelSettings(), default_followups="anyone", fixed_auto=True
    )
    text = msg["blocks"][0]["text"]["text"]
    assert "ANSWER_CHANNELS" in text
    assert "from anyone in the thread (the bot's default)" in text
    for block in msg["blocks"]:
        Block.parse(block).validate_json()  # type: ignore[union-attr]


def test_the_home_part_is_bounded_and_valid() -> None:
    """At most MAX_HOME_CHANNELS channels, badly formed ids left out, valid blocks."""
    lines = [ChannelLine(f"C{n}", ChannelSettings("auto")) for n in range(30)]
    lines.insert(0, ChannelLine("<!here>", ChannelSettings("auto")))
    blocks = render_home(_home(lines))["blocks"]
    channels = [b for b in blocks if b["type"] == "section" and "*Answers:*" in b["text"]["text"]]
    assert MAX_HOME_CHANNELS == len(channels)
    assert channels[0]["text"]["text"].startswith("<#C0>")
    for block in blocks:
        Block.parse(block).validate_json()  # type: ignore[union-attr]
    assert "Channel settings" not in str(render_home(_home([])))


def _home(lines: list[ChannelLine]) -> HomeInput:
    now = datetime(2026, 11, 3, 15, 30, tzinfo=UTC)
    return HomeInput(answers_left=1, per_day=5, resets_at=now, now=now, channels=lines)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("channel", ""),
        ("channel auto", "auto"),
        ("Channel  private on", "private on"),
        ("channels are slow", None),
        ("how do I create a channel?", None),
    ],
)
def test_channel_words_come_only_after_the_keyword(text: str, words: str | None) -> None:
    """`/gdocs channel …` is the settings; a question about channels is a question."""
    assert words == channel_words(text)


@pytest.mark.parametrize(
    ("route", "private"),
    [
        (Route("answer", "q"), True),
        (Route("search", "q"), True),
        (Route("pay", "q"), True),
        (Route("doc", "documents/x"), False),
        (Route("help", ""), False),
        (Route("quota", ""), False),
    ],
)
def test_a_private_channel_makes_answers_private_not_pages_or_help(
    route: Route, private: bool
) -> None:
    """`private on` applies to answers and searches; a whole page, help and quota are as
    they always are."""
    assert private == with_channel_privacy(route, True).private
    assert route == with_channel_privacy(route, False)


def test_the_shortcut_asks_a_reply_with_the_threads_first_message() -> None:
    """The root goes first, cut to ROOT_CONTEXT_CHARS; no root (or the same text): as is."""
    assert "Moving backups — follow-up: how?" == with_root_context("Moving backups", "how?")
    assert "how?" == with_root_context(None, "how?")
    assert "how?" == with_root_context("how?", "how?")
    long = with_root_context("x" * 2000, "how?")
    assert len(long) == ROOT_CONTEXT_CHARS + len(" — follow-up: how?")


def test_someone_elses_message_is_never_taken_as_a_command() -> None:
    """The shortcut routes the text as free text: "doc …" or "help" in a message is asked."""
    router = Router()
    assert ("answer", "help") == (
        router.route_message("help").kind,
        router.route_message("help").query,
    )
    assert "search" == router.route_message("search firestore").kind  # looked up, as written
    assert "search firestore" == router.route_message("search firestore").query
    assert "answer" == router.route_message("doc how do I make a bucket?").kind


@pytest.mark.parametrize(
    ("asker", "about", "head"),
    [
        ("UANA1", "UBEN1", "<@UANA1> asked about <@UBEN1>'s message:\n> how &lt;b&gt;?"),
        ("UANA1", "UANA1", "<@UANA1> asked about their own message:\n> how &lt;b&gt;?"),
        ("UANA1", "<!channel>", "<@UANA1> asked:\n> how &lt;b&gt;?"),
        ("UANA1", None, "<@UANA1> asked:\n> how &lt;b&gt;?"),
    ],
)
def test_a_shortcut_answer_names_who_asked_about_whose_message(
    asker: str, about: str | None, head: str
) -> None:
    """The head names both people (well-formed ids only); the question is escaped."""
    from bot.models import Answer
    from bot.render import render_answer

    answer = Answer(query="how <b>?", kind="answer", text="Like so.")
    msg = render_answer(answer, asker=asker, question="how <b>?", about=about)
    assert head == msg["blocks"][0]["text"]["text"]


FIREBASE = ("firebase.google.com",)
BOTH = ("developer.android.com", "firebase.google.com")


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        ("products firebase", ChangeSetting("products", products=FIREBASE)),
        ("products Firebase,Android", ChangeSetting("products", products=BOTH)),
        ("products firebase android", ChangeSetting("products", products=BOTH)),
        ("products all", ChangeSetting("products")),
        ("products", ChannelUsage()),
    ],
)  # fmt: skip
def test_channel_products_words(words: str, expected: object) -> None:
    assert expected == parse_channel_request(words)


def test_unknown_channel_products_are_refused_and_nothing_changes() -> None:
    request = parse_channel_request("products firebase fire")
    assert isinstance(request, UnknownProducts)
    said = render_scope_refused(request.error, channel=True)["text"]
    assert said.startswith("I don't know the product “fire”: try `cloud`, `firebase`")
    assert said.endswith("Nothing was changed.")


def test_products_change_only_the_products() -> None:
    start = ChannelSettings("auto", private=True, followups="off")
    request = parse_channel_request("products firebase")
    assert isinstance(request, ChangeSetting)
    assert ChannelSettings("auto", True, "off", FIREBASE) == request.apply(start)


@pytest.mark.parametrize(
    ("products", "expected"),
    [
        (FIREBASE, "limited my answers here to Firebase docs — `/gdocs channel products all`"),
        ((), "cleared this channel's products"),
    ],
)
def test_a_products_change_posts_who_limited_the_channel_and_the_undo(
    products: tuple[str, ...], expected: str
) -> None:
    notice = render_channel_notice("UANA1", "products", ChannelSettings(products=products))
    assert notice["text"].startswith("<@UANA1> ")
    assert expected in notice["text"]


@pytest.mark.parametrize(
    ("apply", "shown"),
    [
        (True, "*Products:* Firebase docs only"),
        (False, "*Products:* Firebase docs only — not applied: that needs the bot's REST setting "
                "(DEVELOPER_KNOWLEDGE_API=rest)"),
    ],
)  # fmt: skip
def test_settings_show_the_products_and_whether_they_apply(apply: bool, shown: str) -> None:
    """On the MCP backend a stored scope is shown as not applied: no silent degradation."""
    msg = render_channel_settings(
        "C1",
        ChannelSettings(products=FIREBASE),
        default_followups="asker",
        fixed_auto=False,
        products_apply=apply,
    )
    assert msg["blocks"][0]["text"]["text"].endswith(shown)
    unscoped = render_channel_settings(
        "C1", ChannelSettings(), default_followups="asker", fixed_auto=False, products_apply=apply
    )
    assert "Products" not in str(unscoped)


def test_the_usage_names_channel_products_where_they_can_apply() -> None:
    """On REST only: the MCP backend's usage stays as it was."""
    words = "`/gdocs channel products firebase android…|all` — limit answers here"
    assert words in render_channel_usage(products=True)["text"]
    assert "products" not in render_channel_usage()["text"]


def test_the_mcp_refusal_of_channel_products_names_the_setting_in_one_line() -> None:
    said = render_scope_refused("needs_rest", channel=True)["text"]
    assert "DEVELOPER_KNOWLEDGE_API=rest" in said
    assert "\n" not in said
