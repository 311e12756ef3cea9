"""Answering: routing a text, the answer flow, bringing a whole page into Slack."""
