"""Bolt listeners, one module per kind of request: each has `register(app, deps)`."""
