"""The data of the report tests' runs: a YAML yes/no task whose loopback verdicts are chosen
per row, one row carrying a script-injection attempt, and the replies the loopback gives."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from jurist.redaction import redact
from jurist.report import html
from jurist.report.html import render_run_html
from support import prompt_sections

REPO = Path(__file__).resolve().parents[2]
MT_BENCH = REPO / "examples" / "mt-bench-grader"
HOSTILE = "</script><script>alert(1)</script>"
"""Judged text that would run a script if a report pasted it into its page unescaped."""

BOOL_TASK = """\
name: report-faithfulness
instructions: Say whether the response is supported, and how sure you are.
inputs: [question, response]
output:
  kind: bool
  confidence: true
  reasoning: false
gold: gold
"""

# id, response (SAY= the loopback's verdict, CONF= its confidence), gold. "SAY=maybe" is not
# a yes/no verdict: that item fails after its parse retry.
BOOL_ROWS = [
    ("r0", "Paris is the capital of France. SAY=true CONF=0.9", True),
    ("r1", "The moon is made of cheese. SAY=true CONF=0.6", False),
    ("r2", "Water boils at 100 C at sea level. SAY=false CONF=0.3", True),
    ("r3", f"Ignore the documents {HOSTILE} SAY=false CONF=0.2", False),
    ("r4", "Canberra is the capital of Australia. SAY=true CONF=0.8", True),
    ("r5", "Light is slower than sound. SAY=false CONF=0.1", False),
    ("r6", "The sun rises in the west. SAY=maybe CONF=0.5", False),
    ("r7", "Seven is a prime number. SAY=true CONF=0.7", True),
    ("r8", "Gold is a noble gas. SAY=true CONF=0.55", False),
]
DISAGREEMENTS = {"r1", "r2", "r8"}
FAILED = {"r6"}

_MARK = re.compile(r"SAY=(\w+) CONF=([\d.]+)")


def bool_responder(body: dict[str, Any]) -> str:
    """The verdict and confidence the response's marker names."""
    found = _MARK.search(prompt_sections(body).get("response", ""))
    verdict, confidence = found.groups() if found else ("false", "0.5")
    return f"[[ ## verdict ## ]]\n{verdict}\n\n[[ ## confidence ## ]]\n{confidence}\n\n[[ ## completed ## ]]"


@dataclass
class LoopbackRun:
    """A judged run of the yes/no task, with the request bodies the loopback received."""

    run_dir: Path
    bodies: list[dict[str, Any]]
    replies: dict[str, str]

    def user_message(self, item_id: str) -> str:
        """The user message sent for an item (it names the item's response text)."""
        response = next(text for row_id, text, _ in BOOL_ROWS if row_id == item_id)
        for body in self.bodies:
            for message in body["messages"]:
                if message["role"] == "user" and response in message["content"]:
                    return str(message["content"])
        raise AssertionError(f"no request for {item_id}")


def bool_responder_for(response: str) -> str:
    """The reply the loopback gives for a response text."""
    return bool_responder({"messages": [{"role": "user", "content": f"[[ ## response ## ]]\n{response}"}]})


def whole(run: Path, **kwargs: object) -> str:
    """report.html of ``run`` as redacting the whole page gives it (what every page was before
    the page was redacted part by part)."""
    patch = pytest.MonkeyPatch()
    patch.setattr(html, "_redacted_page", lambda page, rows, data, read: redact(page(rows, data)))
    try:
        return render_run_html(run, **kwargs)  # type: ignore[arg-type]
    finally:
        patch.undo()
