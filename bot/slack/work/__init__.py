"""Durable work: requests recorded before the ack, tracked replies, takeover after a crash, Stop."""
