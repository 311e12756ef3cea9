"""Verified answers, the I/O half: the cited pages in one get_documents call (through the
document cache), the pure check (`bot.verify`), the result kept with the answer in the
answer cache, and `gdocs_snippets_total`. Never in the way: past VERIFY_TIMEOUT_SECONDS,
or when a page cannot be had, the answer goes on marked "unchecked"."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from bot.errors import GdocsError, InvalidInput
from bot.models import Answer, SnippetResult, Verification
from bot.names import MAX_NAMES_PER_CALL, normalize_doc_ref
from bot.observability.metrics import Metrics
from bot.store import ModelCodec, Op, Store, StoreError, WriteBehind
from bot.text import clean_query
from bot.upstream._question_key import question_key
from bot.upstream._retrieval import DocumentFetcher
from bot.upstream._tools import deadline
from bot.verify import check_answer, count_commands, unchecked

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
        behind: WriteBehind | None = None,
    ) -> None:
        self._behind = behind
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
        if count_commands(answer.text) == 0:
            result = Verification(status="checked")  # nothing to look up: no call
        else:
            result = await self._check(answer)
        for name in _RESULTS:
            count = result.count(name)
            if count:
                self._metrics.count(SNIPPETS_METRIC, SNIPPETS_HELP, count, result=name)
        checked = answer.model_copy(update={"verification": result})
        if result.status == "checked":
            await self._keep(checked)
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
            return unchecked(answer.text)
        loop = asyncio.get_running_loop()
        token = deadline.set(loop.time() + self._timeout)
        try:
            async with asyncio.timeout(self._timeout):
                found = await self._documents.get(names)
        except (GdocsError, TimeoutError) as exc:
            # the answer is worth more than its marks: it goes out, marked "not checked"
            logger.info("answer not checked: %s", type(exc).__name__)
            return unchecked(answer.text)
        finally:
            deadline.reset(token)
        pages = [found[name] for name in names]
        if len(answer.text) + sum(len(page.content) for page in pages) < OFF_LOOP_CHARS:
            return check_answer(answer.text, pages)
        # CPU over up to 20 whole pages: in a worker thread, so the acks never wait for it
        return await asyncio.to_thread(check_answer, answer.text, pages)

    async def _keep(self, answer: Answer) -> None:
        """The checked answer back in the answer cache: a cached answer keeps its marks."""
        seconds = self._keep_for(answer)
        if seconds <= 0 or answer.cached:
            return  # a cached answer is not kept again: that would stretch its TTL
        try:
            key = "answer:" + question_key(clean_query(answer.query, self._max_query_chars))
            if self._behind is not None:  # nobody waits for it: it rides the next batch
                self._behind.add([Op.set(key, answer, _ANSWER, seconds)])
                return
            await self._store.set(key, answer, _ANSWER, seconds)
        except (StoreError, InvalidInput) as exc:
            logger.info("checked answer not cached: %s", exc)
