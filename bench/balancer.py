"""A small fake load balancer in front of the bot's replicas, with Slack's retries.

Requests alternate between the replicas (round robin, as Cloud Run's front end may send
them). Some Events API deliveries are then delivered again, as Slack does when it thinks the
first went unanswered: the same body and `event_id`, freshly signed, with
`X-Slack-Retry-Num: 1` and `X-Slack-Retry-Reason: http_timeout`, to the *other* replica — at
the same moment ("race": the two replicas claim the event at once) or a second later
("late"). With one replica, "the other" is the same one. The time each replica takes to
answer (the acknowledgement) is recorded here, where the network hop is shortest.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from dataclasses import dataclass, field

import aiohttp

from bench.driver import signed_headers

#: how long after the first delivery a "late" retry is sent
LATE_RETRY_SECONDS = 1.0


@dataclass(frozen=True)
class Delivery:
    replica: int
    sent: float  # time.monotonic()
    acked: float
    status: int
    retry: bool


@dataclass
class Balancer:
    #: each replica's `/slack/events` URL
    urls: list[str]
    deliveries: list[Delivery] = field(default_factory=list)
    per_replica: Counter[int] = field(default_factory=Counter)
    _next: int = 0
    _session: aiohttp.ClientSession | None = None
    _later: set[asyncio.Task[None]] = field(default_factory=set)

    async def start(self) -> None:
        self._session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0))

    async def send(self, body: str, content_type: str, retry: str = "none") -> float:
        """Deliver one request to the next replica (and schedule its retry); the moment it
        was handed to the replica."""
        replica = self._next % len(self.urls)
        self._next += 1
        other = (replica + 1) % len(self.urls)
        sent = time.monotonic()
        first = self._deliver(replica, body, content_type, retry=False)
        if retry == "race":
            await asyncio.gather(first, self._deliver(other, body, content_type, retry=True))
        else:
            await first
        if retry == "late":
            task = asyncio.ensure_future(self._late(other, body, content_type))
            self._later.add(task)
            task.add_done_callback(self._later.discard)
        return sent

    async def _late(self, replica: int, body: str, content_type: str) -> None:
        await asyncio.sleep(LATE_RETRY_SECONDS)
        await self._deliver(replica, body, content_type, retry=True)

    async def _deliver(self, replica: int, body: str, content_type: str, *, retry: bool) -> None:
        assert self._session is not None, "start() first"
        headers = signed_headers(body, content_type)
        if retry:
            headers |= {"X-Slack-Retry-Num": "1", "X-Slack-Retry-Reason": "http_timeout"}
        self.per_replica[replica] += 0 if retry else 1
        sent = time.monotonic()
        try:
            async with self._session.post(self.urls[replica], data=body, headers=headers) as resp:
                await resp.read()
                status = resp.status
        except aiohttp.ClientError:
            status = 0
        self.deliveries.append(Delivery(replica, sent, time.monotonic(), status, retry))

    async def close(self) -> None:
        if self._later:
            await asyncio.wait(self._later, timeout=LATE_RETRY_SECONDS + 10)
        if self._session is not None:
            await self._session.close()
