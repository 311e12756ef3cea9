"""Pure rendering: Markdown from the documentation servers to safe Slack messages.

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
from bot.render.blocks import Message, message_chars
from bot.render.documents import (
    PAGE_CHARS,
    document_file,
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
    render_not_in_channel_hint,
    render_progress,
)

__all__ = [
    "ACTION_NEXT_PAGE",
    "ACTION_SHOW_DOC_MORE",
    "ACTION_SHOW_DOC_PREFIX",
    "PAGE_CHARS",
    "Message",
    "decode_page_value",
    "document_file",
    "document_pages",
    "encode_page_value",
    "escape",
    "link",
    "markdown_to_blocks",
    "markdown_to_mrkdwn",
    "mention",
    "message_chars",
    "render_answer",
    "render_document_file_intro",
    "render_document_page",
    "render_error",
    "render_help",
    "render_not_in_channel_hint",
    "render_progress",
    "wants_file",
]
