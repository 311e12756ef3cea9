"""Pure rendering: every word and block a user reads, from results to safe Slack messages.

No I/O here. Every untrusted string is escaped (`escape`); the only Slack markup a message
carries is what `link()` and `mention()` build, so nothing a document or a user writes can
ping anyone or disguise a link.
"""

from bot.render.actions import (
    ACTION_NEXT_PAGE,
    ACTION_SHOW_DOC_MORE,
    ACTION_SHOW_DOC_PREFIX,
    decode_page_value,
    encode_page_value,
)
from bot.render.blocks import MAX_BLOCKS, Message, text_message
from bot.render.document_view import (
    PAGE_CHARS,
    document_file,
    document_page_spans,
    document_pages,
    render_document_file_intro,
    render_document_page,
    wants_file,
)
from bot.render.escape import escape, link, mention
from bot.render.markdown import markdown_to_blocks, markdown_to_mrkdwn
from bot.render.messages import (
    render_answer,
    render_error,
    render_help,
    render_progress,
)
from bot.render.notices import (
    AUTHORIZE_FAILED,
    fallback_note,
    render_document_gone,
    render_fetching,
    render_internal_error,
    render_no_more_pages,
    render_not_in_channel_hint,
    render_quota_unknown,
    render_quota_waiting,
    render_rate_limited,
    render_restarting,
    render_stale_button,
    with_not_in_channel_hint,
    with_restart_note,
)
from bot.render.pages import PageSpan
from bot.render.quota import render_quota_note, render_quota_status

__all__ = [
    "ACTION_NEXT_PAGE",
    "ACTION_SHOW_DOC_MORE",
    "ACTION_SHOW_DOC_PREFIX",
    "AUTHORIZE_FAILED",
    "MAX_BLOCKS",
    "PAGE_CHARS",
    "Message",
    "PageSpan",
    "decode_page_value",
    "document_file",
    "document_page_spans",
    "document_pages",
    "encode_page_value",
    "escape",
    "fallback_note",
    "link",
    "markdown_to_blocks",
    "markdown_to_mrkdwn",
    "mention",
    "render_answer",
    "render_document_file_intro",
    "render_document_gone",
    "render_document_page",
    "render_error",
    "render_fetching",
    "render_help",
    "render_internal_error",
    "render_no_more_pages",
    "render_not_in_channel_hint",
    "render_progress",
    "render_quota_note",
    "render_quota_status",
    "render_quota_unknown",
    "render_quota_waiting",
    "render_rate_limited",
    "render_restarting",
    "render_stale_button",
    "text_message",
    "wants_file",
    "with_not_in_channel_hint",
    "with_restart_note",
]
