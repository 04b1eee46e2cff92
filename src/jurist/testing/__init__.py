"""Offline testing aids: a loopback OpenAI-compatible server for judges with no provider.

The names load on first use, so ``python -m jurist.testing.openai_server`` runs the server
module once, as ``__main__``, not also as an import of this package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jurist._lazy import lazy_exports

if TYPE_CHECKING:
    from jurist.testing.openai_server import (
        Fault,
        OpenAICompatibleServer,
        Reply,
        Token,
        closed_port_url,
        last_user_message,
    )

__all__ = ["Fault", "OpenAICompatibleServer", "Reply", "Token", "closed_port_url", "last_user_message"]

__getattr__, __dir__ = lazy_exports(__name__)
