"""What the Slack side keeps in the store: rate windows, profiles, threads, channel settings."""
