"""The week's report for admins: on their Home tab and as the reply to `/gdocs report`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.render._text import (
    Block,
    Message,
    context,
    divider,
    escape,
    escape_truncated,
    header,
    section,
)

if TYPE_CHECKING:
    from bot.report import Report


def _week_lines(week: Report) -> tuple[str, str]:
    t = week.total
    share = f"{round(100 * t.generated / t.questions)} %" if t.questions else "–"
    team = t.team.get("used", 0)
    figures = (
        f"*{t.questions}* questions · *{share}* got a generated answer · "
        + (f"{team} team answer{'s' if team != 1 else ''} · " if team else "")
        + f"{t.search_only} search results only · {t.unanswered} no answer"
    )
    if guests := t.guest_refused:  # people from other organisations (EXTERNAL_USERS=deny)
        plural = "s" if guests != 1 else ""
        figures += f"\n{guests} question{plural} from other organisations refused"
    if week.by_product:  # the products questions were limited to, if any was
        shown = " · ".join(f"{escape(p)} {n}" for p, n in week.by_product.items())
        figures += f"\n*By product:* {shown}"
    if not week.gaps:
        return figures, "*Top gaps:* none this week."
    gaps = "\n".join(
        f"{i}. {escape_truncated(g.topic, 80, at_word=True)} ({g.count}×)"
        for i, g in enumerate(week.gaps[:3], start=1)
    )
    return figures, f"*Top gaps* (search only, no hit, 👎, unverified commands)\n{gaps}"


def week_blocks(week: Report, command: str) -> list[Block]:
    figures, gaps = _week_lines(week)
    about = (
        f"{week.since} to {week.until}, Pacific days. Only admins see this. "
        f"`{command} report` posts it to you; `gdocs-bot report --format html` has it all."
    )
    return [header("This week"), section(figures), section(gaps), context(about), divider()]


def render_week_report(week: Report) -> Message:
    """The private reply to `/gdocs report`."""
    figures, gaps = _week_lines(week)
    blocks = [
        section(f"*This week* ({week.since} to {week.until}, Pacific days)"),
        section(figures),
        section(gaps),
        context("The whole picture: `gdocs-bot report --format html` where the bot runs."),
    ]
    text = f"This week ({week.since} to {week.until}): {week.total.questions} questions"
    return {"text": text, "blocks": blocks}
