"""Verified answers: each command and code block of a generated answer looked up in the
pages it cites. Pure (text in, results out); nothing is run, fetched or stored here.

A command is *found* when one page shows it (placeholders, flag order and line breaks
aside), *partly* found when a page shows the command but not all its flags (or has all its
words, only not together), else *not found*. See docs/verified-answers.md.
"""

from __future__ import annotations

from bot.verify._match import MAX_SNIPPETS, check_answer, count_commands, unchecked

__all__ = ["MAX_SNIPPETS", "check_answer", "count_commands", "unchecked"]
