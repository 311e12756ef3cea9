"""Logging set-up. (Placeholder: the runtime/shipping work replaces this with JSON logs and
secret redaction; keep the `configure_logging(settings)` signature.)"""

from __future__ import annotations

import logging
import sys

from bot.settings import Settings


def configure_logging(settings: Settings) -> None:
    logging.basicConfig(
        level=settings.log_level,
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s %(message)s",
        force=True,
    )
