"""``jurist view``: a local web app to browse, compare and label judged runs.

It reads run directories (what ``jurist judge --out`` writes) under one folder and never
writes into them, except the labels people set (``labels.jsonl``, append-only). The parts
that need no web server (:mod:`jurist.view.runs`, :mod:`jurist.view.table`,
:mod:`jurist.view.labels`, :mod:`jurist.view.compare`) import neither Starlette nor
uvicorn, so ``jurist labels export`` works without the ``view`` extra; :mod:`jurist.view.app`
and :mod:`jurist.view.server` need it (``pip install "jurist[view]"``).
"""

from __future__ import annotations

from jurist.errors import ConfigError, install_hint

__all__ = ["VIEW_EXTRA", "require_view_extra"]

VIEW_EXTRA = install_hint("view")
"""How to install what the web app needs."""


def require_view_extra() -> None:
    """Check that the web app's packages (Starlette, uvicorn, Jinja2) are installed.

    Raises:
        ConfigError: One is missing; the message says how to install them.
    """
    import importlib.util

    missing = [name for name in ("starlette", "uvicorn", "jinja2") if importlib.util.find_spec(name) is None]
    if missing:
        raise ConfigError(f"jurist view needs {', '.join(missing)}: {VIEW_EXTRA}")
