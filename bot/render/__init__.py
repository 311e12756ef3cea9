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
from bot.render.agent import PROMPTS_TITLE, suggested_prompts
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
from bot.render.errors import error_sentence, status_detail
from bot.render.escape import escape, link, mention
from bot.render.feedback import (
    ACTION_FEEDBACK,
    ACTION_FEEDBACK_COMMENT,
    COMMENT_BLOCK_ID,
    FEEDBACK_MODAL_CALLBACK,
    Vote,
    comment_from_view,
    decode_vote,
    feedback_comment_modal,
    render_feedback_recorded,
    render_feedback_stale,
    render_feedback_thanks,
    vote_from_view,
)
from bot.render.home import (
    ASK_AGAIN_ACTION_RE,
    HomeInput,
    RecentQuestion,
    decode_ask_again,
    render_home,
)
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
from bot.render.unfurl import doc_name_for_url, render_unfurl

__all__ = [
    "ACTION_FEEDBACK",
    "ACTION_FEEDBACK_COMMENT",
    "ACTION_NEXT_PAGE",
    "ACTION_SHOW_DOC_MORE",
    "ACTION_SHOW_DOC_PREFIX",
    "ASK_AGAIN_ACTION_RE",
    "AUTHORIZE_FAILED",
    "COMMENT_BLOCK_ID",
    "FEEDBACK_MODAL_CALLBACK",
    "MAX_BLOCKS",
    "PAGE_CHARS",
    "PROMPTS_TITLE",
    "HomeInput",
    "Message",
    "PageSpan",
    "RecentQuestion",
    "Vote",
    "comment_from_view",
    "decode_ask_again",
    "decode_page_value",
    "decode_vote",
    "doc_name_for_url",
    "document_file",
    "document_page_spans",
    "document_pages",
    "encode_page_value",
    "error_sentence",
    "escape",
    "fallback_note",
    "feedback_comment_modal",
    "link",
    "markdown_to_blocks",
    "markdown_to_mrkdwn",
    "mention",
    "render_answer",
    "render_document_file_intro",
    "render_document_gone",
    "render_document_page",
    "render_error",
    "render_feedback_recorded",
    "render_feedback_stale",
    "render_feedback_thanks",
    "render_fetching",
    "render_help",
    "render_home",
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
    "render_unfurl",
    "status_detail",
    "suggested_prompts",
    "text_message",
    "vote_from_view",
    "wants_file",
    "with_not_in_channel_hint",
    "with_restart_note",
]
