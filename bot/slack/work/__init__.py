"""Durable work: acknowledged requests recorded before the ack and finished after a crash."""
