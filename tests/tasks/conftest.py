"""Tasks registered by a test stay in that test: the registry is restored after each one."""

from __future__ import annotations

import pytest

from jurist.tasks import _registry


@pytest.fixture(autouse=True)
def _own_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_registry, "_registered", dict(_registry._registered))
