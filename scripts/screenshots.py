"""Regenerate the screenshots of the HTML report and of ``jurist view`` in ``docs/img/``.

Everything is made here, offline: the bundled RAGBench sample judged by the offline
baseline (its HTML report), and the tutorial's support answers
(``examples/support-answers``) judged by their offline rules and by a simulated model on a
loopback server (``jurist.testing.OpenAICompatibleServer``), so that the viewer has two runs
to compare and disagreements to label. The pages are captured in the system Chromium
(headless, through Playwright; nothing is downloaded)::

    pip install ".[view,test]"
    python scripts/screenshots.py [--out docs/img] [--chromium /usr/bin/chromium]
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

EXAMPLE = ROOT / "examples" / "support-answers"

_ANSWER = re.compile(r"\[\[ ## answer ## \]\]\n(.*?)(?=\n\n\[\[ ## |\n\nRespond with |\Z)", re.S)


def _llm_score(body: dict[str, Any]) -> str:
    """A simulated model: it rates an answer by its length and by whether it refuses."""
    user = next(m["content"] for m in reversed(body["messages"]) if m["role"] == "user")
    found = _ANSWER.search(user)
    answer = found.group(1).strip() if found else ""
    if re.search(r"(?i)contact|cannot help|not sure", answer):
        score, why = 1, "The answer sends the customer elsewhere instead of helping."
    elif len(answer) < 60:
        score, why = 2, "The answer is too short to resolve the question."
    elif len(answer) < 140:
        score, why = 4, "The answer helps but leaves a step out."
    else:
        score, why = 5, "The answer gives the concrete steps the customer needs."
    return f"[[ ## reasoning ## ]]\n{why}\n\n[[ ## verdict ## ]]\n{score}\n\n[[ ## completed ## ]]"


def make_runs(work: Path) -> dict[str, Path]:
    """The run directories: the bundled RAGBench sample judged by its baseline, and the
    tutorial's support answers judged by their offline rules and by a simulated model."""
    from jurist.judges.config import JudgeConfig
    from jurist.testing import OpenAICompatibleServer
    from jurist.verbs import judge

    runs = work / "runs"
    made = {"ragbench": runs / "ragbench" / "baseline"}
    judge("ragbench", "sample:ragbench", None, out=made["ragbench"], progress=False)
    task, data = EXAMPLE / "task.yaml", EXAMPLE / "answers.csv"
    made["rules"] = runs / "support-baseline"
    judge(task, data, None, out=made["rules"], progress=False)
    os.environ.setdefault("SCREENSHOT_JUDGE_KEY", "not-a-real-key")
    with OpenAICompatibleServer(_llm_score) as server:
        config = JudgeConfig(
            model="openai/gpt-4o-mini",
            api_base=server.base_url,
            api_key_env="SCREENSHOT_JUDGE_KEY",
            cache_dir=work / "cache",
            concurrency=4,
        )
        made["llm"] = runs / "support-gpt"
        judge(task, data, config, out=made["llm"], progress=False)
    return made


def capture(made: dict[str, Path], out: Path, chromium: str) -> list[Path]:
    """Screenshots of the reports and of the viewer's pages, in a 1,400-pixel-wide window."""
    from playwright.sync_api import sync_playwright

    from jurist.testing.browser import CHROMIUM_FLAGS
    from jurist.view.server import ViewServer

    out.mkdir(parents=True, exist_ok=True)
    shots: list[Path] = []

    def shot(name: str, page: Any, selector: str | None = None) -> None:
        shots.append(out / name)
        if selector is None:
            page.screenshot(path=shots[-1])
        else:
            page.locator(selector).screenshot(path=shots[-1])

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_FLAGS)
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.goto((made["ragbench"] / "report.html").as_uri())
        page.locator("#figures").scroll_into_view_if_needed()
        shot("report.png", page)
        page.goto((made["rules"] / "report.html").as_uri())
        shot("report-scores.png", page, "#figures")
        page.click("#items-table tr.item[data-id='t02']")
        page.locator("#items").scroll_into_view_if_needed()
        shot("report-items.png", page)
        runs = made["rules"].parent
        with ViewServer(runs.relative_to(Path.cwd())) as viewer:
            pages = {
                "viewer-history.png": "",
                "viewer-compare.png": "compare?a=support-gpt&b=support-baseline",
                "viewer-queue.png": "queue?run=support-gpt",
                "viewer-item.png": "item?run=support-gpt&id=t05",
            }
            for name, path in pages.items():
                page.goto(viewer.url + path)
                shot(name, page)
        browser.close()
    return shots


def main() -> int:
    from jurist.testing.browser import chromium_path

    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img")
    parser.add_argument("--chromium", default=chromium_path() or "/usr/bin/chromium")
    args = parser.parse_args()
    out = args.out.resolve()
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        cwd = Path.cwd()
        os.chdir(work)
        try:
            shots = capture(make_runs(work), out, args.chromium)
        finally:
            os.chdir(cwd)
    for shot in shots:
        print(shot.relative_to(ROOT) if shot.is_relative_to(ROOT) else shot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
