"""The README's test command is exactly what CI runs (``.ci/run``)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_ci_runs_the_readme_test_command() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```bash\n(.*?)\n```", readme, re.S)
    test_command = blocks[1].strip()
    ci_lines = [
        line.strip()
        for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith(("#", "set ", "cd "))
    ]
    assert ci_lines == [test_command]
    assert test_command.endswith("pytest -q -n 2") and "JURIST_REQUIRE_BROWSER=1" in test_command
