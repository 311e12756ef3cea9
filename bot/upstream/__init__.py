"""The Google documentation MCP client: `build_service(config)` gives a `GoogleDocsService`
implementing `bot.service.DocsService` over Developer Knowledge and Google Pay & Wallet.

    service = build_service(upstream_config(settings), store=store)  # bot.configs
    answer = await service.ask("How do I create a Cloud Storage bucket?")
    await service.aclose()
"""

from __future__ import annotations

from bot.upstream._build import build_service
from bot.upstream._config import UpstreamConfig
from bot.upstream._service import GoogleDocsService
from bot.upstream._tools import missing_tools

__all__ = ["GoogleDocsService", "UpstreamConfig", "build_service", "missing_tools"]
