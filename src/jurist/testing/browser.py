"""The system Chromium for browser checks of jurist's pages (tests, screenshots).

No browser is ever downloaded: Debian's ``chromium`` package (or ``$JURIST_CHROMIUM``) is
driven headless through Playwright's ``executable_path``.
"""

from __future__ import annotations

import os
import shutil

__all__ = ["CHROMIUM_FLAGS", "chromium_path"]

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
"""Headless, and no connection of Chromium's own: on a machine without a network its
background connections would be refused at every start."""


def chromium_path() -> str | None:
    """The system Chromium (``$JURIST_CHROMIUM``, else ``chromium`` or ``chromium-browser`` or
    ``google-chrome`` on the PATH), or ``None``."""
    explicit = os.environ.get("JURIST_CHROMIUM")
    if explicit:
        return explicit
    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
