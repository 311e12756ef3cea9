"""Getting replies in front of people: threads, response_url, DMs, status, private answers."""
