"""The Slack side of gdocs-bot. Imports go one way (tests/test_layers.py):
`app`, `recovery` → `listeners` (Bolt registration, durable accept, ack) → `flows` (answer,
pages, settings, sharing, home, unfurls, feedback; each takes the parts it uses) → `work`
(the work log, tracked replies, Stop) → `delivery` (the replies) → `memory` (small state)."""
