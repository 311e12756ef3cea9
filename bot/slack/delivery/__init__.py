"""Replies: one `SlackReply` per surface, a streamed reply, the Web API calls they make."""
