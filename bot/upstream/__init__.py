"""The Google documentation MCP client: `build_service(settings)` gives a `GoogleDocsService`
implementing `bot.docs.DocsService` over Developer Knowledge and Google Pay & Wallet.

    service = build_service(settings, metrics=metrics)
    answer = await service.ask("How do I create a Cloud Storage bucket?")
    await service.aclose()
"""

from __future__ import annotations

from bot.upstream._build import build_service
from bot.upstream._cache import Cache, MemoryCache
from bot.upstream._service import GoogleDocsService

__all__ = ["Cache", "GoogleDocsService", "MemoryCache", "build_service"]
