"""Verified answers: each command and code block of a generated answer looked up in the pages
it cites (found, partly found or not found; docs/verified-answers.md). Pure: nothing is run,
fetched or stored here."""

from __future__ import annotations

from bot.verify._match import MAX_SNIPPETS as MAX_SNIPPETS
from bot.verify._match import check_answer as check_answer
from bot.verify._match import count_commands as count_commands
from bot.verify._match import unchecked as unchecked
