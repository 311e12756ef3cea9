"""The Slack side of gdocs-bot: Bolt listeners, rendering glue and serving."""
