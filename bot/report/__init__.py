"""`gdocs-bot report`: what the team asks and where the docs fall short.

- `tally` — per-day counters the bot writes as it works (questions, outcomes, reuse,
  answer_query calls made and refused): `report:<pacific day>:<name>`, kept as long as the
  answer records (`min(FEEDBACK_RETENTION_DAYS, 30)` days);
- `outcome` — how one answered question is classified (pure);
- `collect` — the store reads behind a report (answer records, votes, counters);
- `aggregate` — the report itself, from what was collected (pure);
- `render_md`, `render_json`, `render_html` — the report as text, JSON or one HTML page
  (pure);
- `summary` — the short "This week" summary for Slack's admins (pure values).

Nothing here names a person: answer records and votes hold user ids, the report reads past
them. This package's `__init__` imports nothing, so the renderer can use `summary` alone.
"""
