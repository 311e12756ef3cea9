"""Document names: what is one, and what only looks like one."""

from __future__ import annotations

import pytest

from bot.errors import InvalidInput
from bot.names import is_valid_name, normalize_doc_ref


@pytest.mark.parametrize(
    "name",
    [
        "documents/docs.cloud.google.com/storage/docs/creating-buckets\n",
        "documents/x.com/a\nb",
        "documents/x.com/../etc",
        "documents/x.com//a",
        "documents/<x>.com/a",
    ],
)
def test_a_name_with_a_line_break_or_a_trick_is_not_a_name(name: str) -> None:
    """A trailing newline (in a button value), a traversal or markup never passes as a
    document name; typed text is trimmed first, so only what is inside it counts."""
    assert not is_valid_name(name)
    if name.strip() == name:
        with pytest.raises(InvalidInput):
            normalize_doc_ref(name)


def test_a_url_becomes_its_document_name() -> None:
    """Slack's <url|label> form and a trailing slash are undone."""
    assert "documents/firebase.google.com/docs/firestore" == normalize_doc_ref(
        "<https://firebase.google.com/docs/firestore/|firebase.google.com/docs/firestore>"
    )
