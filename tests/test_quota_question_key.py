"""Answers are spent only on new questions: questions that differ in form share one cache key,
questions that differ in meaning (a verb, a product, a number, a flag) never do."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from bot.upstream import FILLERS, question_key


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("How do I create a Cloud Storage bucket?", "how to create cloud storage buckets"),
        ("Create a bucket", "  create   THE bucket!! "),
        ("How can I deploy to Cloud Run?", "deploy to cloud run"),
        ("Could you please list the Firestore indexes?", "list firestore index"),
        ("Can you explain IAM policies", "explain IAM policy."),
        ("What are the branches of a repo?", "what are branch of repo"),
        ("How should I rotate API keys", "rotate an API key"),
        ("Which GPUs does Vertex AI support?", "which GPU does vertex ai support"),
        ("“Cloud Run” pricing", "(cloud run) pricing"),
        ("classes in Dart", "class in dart"),
        ("What is\tthe\u00a0status?", "what is status"),
        ("Ｃｌｏｕｄ Ｒｕｎ", "cloud run"),  # full-width letters
        ("deploy\u200b to cloud run", "deploy to cloud run"),  # a zero-width space
    ],
)
def test_questions_differing_only_in_form_share_a_key(one: str, other: str) -> None:
    """Case, punctuation, spacing, filler words and simple plurals do not make a new question."""
    assert question_key(one) == question_key(other)


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("create a bucket", "delete a bucket"),
        ("How do I create a bucket?", "How do I delete a bucket?"),
        ("Cloud Run quotas", "Cloud Functions quotas"),
        ("Install Python 3.11", "Install Python 3.12"),
        ("HTTP/2 support", "HTTP/3 support"),
        ("HTTP load balancer", "HTTPS load balancer"),
        ("gs://bucket-a permissions", "gs://bucket-b permissions"),
        ("gcloud run deploy --region", "gcloud run deploy --location"),
        ("Firebase for iOS", "Firebase for Android"),
        ("Kotlin coroutines", "Kotlin flows"),
        ("What is the status", "What is the analysis"),
        ("10 buckets", "100 buckets"),
        ("Node.js 18", "Node.js 20"),
        ("a", "the"),
    ],
)
def test_questions_differing_in_meaning_never_share_a_key(one: str, other: str) -> None:
    """A verb, a product name, a number, a version, a flag or a path keeps questions apart."""
    assert question_key(one) != question_key(other)


@pytest.mark.parametrize(
    ("question", "key"),
    [
        ("How do I create a Cloud Storage bucket?", "create cloud storage bucket"),
        (
            "gcloud storage ls gs://my-bucket/ --project=X.",
            "gcloud storage ls gs://my-bucket/ --project=x",
        ),
        ("How to call f() (in Python)?", "call f() in python"),
        ("What's new in C++ and .NET?", "what's new in c++ and .net"),
        ("Python 3.11?", "python 3.11"),
        ("The", "the"),
        ("how to", "how to"),
        ("?!", ""),
    ],
)
def test_code_like_words_stay_whole(question: str, key: str) -> None:
    """Paths, flags, versions, calls and names keep their inner punctuation; a question made
    only of filler keeps it (never an empty key)."""
    assert key == question_key(question)


# --- properties --------------------------------------------------------------------------
_WORDS = st.sampled_from(
    [
        "How",
        "do",
        "I",
        "create",
        "a",
        "the",
        "an",
        "Bucket",
        "buckets?",
        "Cloud",
        "Run",
        "policies",
        "class",
        "status",
        "HTTP/2",
        "gs://x",
        "--location",
        "3.11",
        "please",
        "can",
        "you",
        "to",
        "how",
        "f()",
        "(Python)",
        "“quoted”",
        "café",
        "Straße",
        "-",
        "?",
        "thes",
        "pleases",
        "Ａｐｉｓ",
        "APIs",
        "x",
        "é",
    ]
)
_SPACES = st.text(alphabet=" \t\n\u00a0\u2003", min_size=1, max_size=3)
_QUESTIONS = st.lists(_WORDS, min_size=1, max_size=12).map(" ".join)
_ANY_TEXT = st.text(max_size=80)


@given(st.one_of(_QUESTIONS, _ANY_TEXT))
@example("How do how to I x")
@example("thes")
@example("ǰ")
def test_the_key_of_a_key_is_itself(question: str) -> None:
    """Normalising twice changes nothing (a key can be looked up as a question)."""
    key = question_key(question)
    assert key == question_key(key)


@given(_QUESTIONS, st.data())
def test_the_key_ignores_case_and_whitespace(question: str, data: st.DataObject) -> None:
    """Upper, lower or mixed case, and any run of spaces, tabs or newlines: the same key."""
    words = question.split()
    spaced = "".join(w + data.draw(_SPACES) for w in words)
    assert question_key(question) == question_key(question.upper())
    assert question_key(question) == question_key(question.lower())
    assert question_key(question) == question_key(question.swapcase())
    assert question_key(question) == question_key(data.draw(_SPACES) + spaced)


@given(st.one_of(_QUESTIONS, _ANY_TEXT))
def test_a_question_with_a_letter_or_digit_never_has_an_empty_key(question: str) -> None:
    """Anything with a letter or a digit keeps a non-empty key (no two such questions
    collapse into the empty one)."""
    if any(c.isalnum() for c in question):
        assert question_key(question)
    assert question_key(question) == question_key(question).strip()


def _fillers_out_the_long_way(words: list[str]) -> list[str]:
    """Rule 4 as the module docstring says it: every filler phrase out, longest first at each
    word, until none is left (the reference the key's faster lookup must agree with)."""
    while True:
        kept: list[str] = []
        i = 0
        while i < len(words):
            match = next((f for f in FILLERS if tuple(words[i : i + len(f)]) == f), None)
            if match is None:
                kept.append(words[i])
                i += 1
            else:
                i += len(match)
        if kept == words:
            return kept
        words = kept


_FILLER_WORDS = st.sampled_from(sorted({w for f in FILLERS for w in f} | {"x", "deploy", "it"}))


@given(st.lists(_FILLER_WORDS, min_size=1, max_size=14))
@example(["how", "do", "how", "to", "i", "x"])
def test_filler_phrases_go_exactly_as_the_rule_says(words: list[str]) -> None:
    """Questions dense with filler words lose exactly the phrases rule 4 names."""
    kept = _fillers_out_the_long_way(words)
    assert question_key(" ".join(words)) == " ".join(kept or words)


def test_asking_the_same_question_again_gives_the_same_key() -> None:
    """The key is a pure function of the question."""
    question = "How do I create the Cloud Storage buckets?"
    first = question_key(question)
    assert question_key(question) == first == "create cloud storage bucket"
