"""Checking a generated answer's commands against the pages it cites: the pages in one
get_documents call (through the document cache), the pure check (`bot.verify`), the result
kept with the answer, and `gdocs_snippets_total`. Past VERIFY_TIMEOUT_SECONDS, or when a page
cannot be had, the answer goes on marked "unchecked"."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from bot import keys, verify
from bot.errors import GdocsError, InvalidInput
from bot.models import Answer, SnippetResult, Verification
from bot.names import MAX_NAMES_PER_CALL, normalize_doc_ref
from bot.observability.metrics import Metrics
from bot.store import ModelCodec, Store, StoreError
from bot.text import clean_query
from bot.upstream._documents import DocumentFetcher, deadline
from bot.upstream._question_key import question_key

logger = logging.getLogger(__name__)
#: answer and pages (characters) from which the check runs in a worker thread
OFF_LOOP_CHARS = 8_000
SNIPPETS_METRIC = "gdocs_snippets_total"
SNIPPETS_HELP = (
    "Commands and code blocks of generated answers checked against their cited pages, by "
    "result (found, partly, not_found, unchecked)."
)
_ANSWER = ModelCodec(Answer)
_RESULTS: tuple[SnippetResult, ...] = ("found", "partly", "not_found", "unchecked")


class Verifier:
    def __init__(
        self,
        documents: DocumentFetcher,
        store: Store,
        metrics: Metrics,
        *,
        timeout: float,
        max_query_chars: int,
        keep_for: Callable[[Answer], float],
    ) -> None:
        self._documents = documents
        self._store = store
        self._metrics = metrics
        self._timeout = timeout
        self._max_query_chars = max_query_chars
        self._keep_for = keep_for

    async def verify(self, answer: Answer) -> Answer:
        """`answer` with its `verification` (unchanged when it has one, or is no generated
        answer)."""
        if answer.kind != "answer" or answer.verification is not None or answer.fallback:
            return answer
        if verify.count_commands(answer.text) == 0:
            result = Verification(status="checked")  # nothing to look up: no call
        else:
            result = await self._check(answer)
        for name in _RESULTS:
            if count := result.count(name):
                self._metrics.count(SNIPPETS_METRIC, SNIPPETS_HELP, count, result=name)
        checked = answer.model_copy(update={"verification": result})
        seconds = self._keep_for(checked)
        # a cached answer is not kept again: that would stretch its TTL
        if result.status == "checked" and seconds > 0 and not answer.cached:
            try:
                key = keys.ANSWER.key(
                    question_key(clean_query(answer.query, self._max_query_chars))
                )
                await self._store.set(key, checked, _ANSWER, seconds)
            except (StoreError, InvalidInput) as exc:
                logger.info("checked answer not cached: %s", exc)
        return checked

    async def _check(self, answer: Answer) -> Verification:
        names = []
        for ref in answer.references:
            try:
                names.append(normalize_doc_ref(ref.name))
            except InvalidInput:
                continue  # a reference we cannot fetch is no page to check against
        names = list(dict.fromkeys(names))[:MAX_NAMES_PER_CALL]
        if not names:
            return verify.unchecked(answer.text)
        token = deadline.set(asyncio.get_running_loop().time() + self._timeout)
        try:
            async with asyncio.timeout(self._timeout):
                found = await self._documents.get(names)
        except (GdocsError, TimeoutError) as exc:
            # the answer is worth more than its marks: it goes out, marked "not checked"
            logger.info("answer not checked: %s", type(exc).__name__)
            return verify.unchecked(answer.text)
        finally:
            deadline.reset(token)
        pages = [found[name] for name in names]
        if len(answer.text) + sum(len(page.content) for page in pages) < OFF_LOOP_CHARS:
            return verify.check_answer(answer.text, pages)
        # CPU over up to 20 whole pages: in a worker thread, so the acks never wait for it
        return await asyncio.to_thread(verify.check_answer, answer.text, pages)
