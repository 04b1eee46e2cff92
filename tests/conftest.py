"""Shared fixtures: an isolated environment and a loopback OpenAI-compatible server."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from jurist.judges.config import JudgeConfig  # noqa: E402
from jurist.testing import OpenAICompatibleServer  # noqa: E402
from jurist.testing.browser import CHROMIUM_FLAGS, chromium_path  # noqa: E402
from support import loopback_config, ragbench_answer  # noqa: E402

TEST_KEY_ENV = "JURIST_TEST_API_KEY"


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test reaches a provider: provider keys and base URLs are removed, a dummy key is set."""
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_API_BASE", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    monkeypatch.setenv(TEST_KEY_ENV, "loopback-test-key")


@pytest.fixture
def server() -> Iterator[OpenAICompatibleServer]:
    """A loopback server that answers like a RAGBench judge."""
    with OpenAICompatibleServer(ragbench_answer) as srv:
        yield srv


@pytest.fixture
def llm_config(server: OpenAICompatibleServer, tmp_path: Path) -> JudgeConfig:
    """A judge config pointing at the loopback server, with a per-test cache and fast retries."""
    return loopback_config(server.base_url, tmp_path / "cache")


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """A headless system Chromium driven by Playwright (no browser is ever downloaded).

    One per test module: Playwright's synchronous API keeps an event loop running in the
    main thread while it is open, which would break later tests that call ``asyncio.run``.

    Skipped with a loud reason when Chromium or Playwright is absent, except where
    ``JURIST_REQUIRE_BROWSER=1`` (CI sets it): there a missing browser fails the test.
    """
    import os

    executable = chromium_path()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        executable = None
    if executable is None:
        reason = (
            "BROWSER TESTS NOT RUN: no system Chromium or no playwright package "
            "(apt-get install -y chromium chromium-driver; pip install '.[test]')"
        )
        if os.environ.get("JURIST_REQUIRE_BROWSER") == "1":
            pytest.fail(reason)
        pytest.skip(reason)
    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_FLAGS)
        try:
            yield instance
        finally:
            instance.close()


@pytest.fixture
def page(browser: object) -> Iterator[object]:
    """A fresh page whose console errors and page errors fail the test at teardown.

    ``page.console_errors`` lists them as they come (a test may assert on it earlier).
    """
    context = browser.new_context()  # type: ignore[attr-defined]
    new_page = context.new_page()
    errors: list[str] = []
    new_page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    new_page.on("pageerror", lambda exc: errors.append(str(exc)))
    new_page.console_errors = errors
    try:
        yield new_page
    finally:
        context.close()
    assert not errors, f"the page logged errors: {errors}"
