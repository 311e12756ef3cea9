"""Every key family the bot keeps in the state store: its prefix, what it holds and how long
it is kept (tests/test_keys.py holds SECURITY.md's table to this list)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class KeyFamily:
    prefix: str
    holds: str
    #: the setting or constant its TTL comes from, as SECURITY.md says it
    retention: str
    #: bounded by its owner (MAX_TEAM_ANSWERS…): never evicted past CACHE_MAX_ENTRIES, as a
    #: cache is, for that would lose what someone saved without a word
    own_bound: bool = False

    def key(self, *parts: str) -> str:  # THREAD.key("C1", "171.2") == "thread:C1:171.2"
        return self.prefix + ":".join(parts)


# --- the docs service's cache (bot/upstream) ------------------------------------------
ANSWER = KeyFamily("answer:", "generated answers by question", "CACHE_ANSWER_TTL_SECONDS")
SEARCH = KeyFamily("search:", "search results by query", "CACHE_SEARCH_TTL_SECONDS")
PAY = KeyFamily("pay:", "Pay search results by language, query", "CACHE_SEARCH_TTL_SECONDS")
DOC = KeyFamily("doc:", "fetched documents", "CACHE_DOCUMENT_TTL_SECONDS")
TITLE = KeyFamily("title:", "document titles", "CACHE_DOCUMENT_TTL_SECONDS")
#: the shared single flight's claim (bot/store/_flight.py)
LOCK = KeyFamily("lock:", "who is computing an answer now", "MCP_TIMEOUT_SECONDS")
#: answer_query's ledger (bot/quota)
QUOTA = KeyFamily("quota:", "answer_query calls, search units; Google's pause", "as said")
#: how the last calls to each server went, for the Home tab (bot/upstream/_calls.py)
UPSTREAM = KeyFamily("upstream:", "the last 5 calls' outcomes per server", "1 hour")

# --- durable work (bot/slack/work/worklog.py) -------------------------------------------
LEASE = KeyFamily("lease:", "a delivery's claim, then a done marker", "WORK_LEASE_SECONDS")
WORK = KeyFamily("work:", "acknowledged work not yet answered", "WORK_MAX_AGE_SECONDS")

# --- feedback (bot/feedback.py) ----------------------------------------------------------
ANSWER_RECORD = KeyFamily("answer_record:", "each posted answer", "FEEDBACK_RETENTION_DAYS")
FEEDBACK = KeyFamily("feedback:", "each vote", "FEEDBACK_RETENTION_DAYS")

# --- gdocs-bot report (bot/report/tally.py) ----------------------------------------------
REPORT = KeyFamily("report:", "per-day counters for the usage report", "FEEDBACK_RETENTION_DAYS")

# --- the Slack side (bot/slack) ------------------------------------------------------------
PAGES = KeyFamily("pages:", "where a document's Slack pages are cut", "CACHE_DOCUMENT_TTL_SECONDS")
RATE = KeyFamily("rate:", "each user's question times", "1 minute")
PROFILE = KeyFamily("profile:", "each user's Slack locale, time zone, admin flag", "6 hours")
THREAD = KeyFamily("thread:", "the question a thread is about, and its asker", "24 hours")
SHARE = KeyFamily("share:", "a private answer waiting for Share in channel", "1 hour")
RECENT = KeyFamily("recent:", "each person's last 10 questions", "30 days")
HOME = KeyFamily("home:", "a hash of what the Home tab last showed", "60 s")
PROMPTS = KeyFamily("prompts:", "prompts set today claims", "1 day")
NODOC = KeyFamily("nodoc:", "document names a link preview found unknown", "1 hour")
CHANNEL = KeyFamily("channel:", "a channel's settings", "CHANNEL_SETTINGS_RETENTION_DAYS")
#: a Stop pressed on one replica for a thread another replica streams (bot/slack/work/stops.py)
STOP = KeyFamily("stop:", "a Stop pressed for a thread, and when", "10 minutes")

#: a guest from another organisation was told, once per channel, whom the bot answers
GUEST_NOTICE = KeyFamily("guest_notice:", "a channel where guests were told", "90 days")
#: the workspaces (or Grid organisations) that installed the bot, tokens encrypted
#: (OAuth mode only, bot/slack/installs.py); bounded by MAX_INSTALLATIONS
INSTALL = KeyFamily("install:", "each installation, encrypted", "until uninstalled", True)
OAUTH_STATE = KeyFamily("oauth_state:", "an install page's one-time state", "10 minutes")

# --- team answers (bot/team.py) ----------------------------------------------------------
TEAM = KeyFamily("team:", "team answers, 👎 drafts", "TEAM_ANSWER_REVIEW_DAYS + 365 days", True)
TEAM_INDEX = KeyFamily("team_q:", "which team answer a question finds", "as its team answer", True)
TEAM_USED = KeyFamily("team_used:", "how often a team answer was given", "as its team answer", True)
#: a generated answer a team answer saved, per question: the one call it stood in for would
#: have kept its answer this long, so later askings would have been cache hits
TEAM_SAVED = KeyFamily("team_saved:", "a call a team answer saved", "CACHE_ANSWER_TTL_SECONDS")

FAMILIES: tuple[KeyFamily, ...] = tuple(v for v in globals().values() if isinstance(v, KeyFamily))
#: the namespaces a memory or SQLite store is opened never to evict
UNEVICTED = frozenset(f.prefix[:-1] for f in FAMILIES if f.own_bound)
