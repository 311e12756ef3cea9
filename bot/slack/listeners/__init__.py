"""Bolt listeners, one module per kind of request, each with `register(app, deps)`: they
record durable work and `ack()` first, then hand the work to the flows."""
