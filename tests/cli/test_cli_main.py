"""The ``jurist`` entry points: the console script's main and ``python -m jurist``."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import version

from support import run_cli


def test_version_and_command_list(capsys):
    assert run_cli(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"jurist {version('jurist')}"
    assert run_cli(["--help"]) == 0
    listed = capsys.readouterr().out
    for command in ("judge", "score", "gate", "optimize", "calibrate", "rgb"):
        assert command in listed


def test_usage_error_exits_2_and_module_entry_point_runs():
    done = subprocess.run(
        [sys.executable, "-m", "jurist", "judge", "ragbench"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2
    assert "Missing argument" in done.stderr or "Missing" in done.stderr


def test_view_help_shows_the_install_line_with_its_extra(capsys) -> None:
    """Rich markup must not swallow ``[view]`` in ``jurist view --help``, and the line works
    from a clone (``pip install ".[view]"``)."""
    assert run_cli(["view", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert 'pip install "jurist[view]"' in text
    assert 'pip install ".[view]" in a clone' in text


def test_install_hints_name_the_extra_for_a_release_and_a_clone() -> None:
    from jurist.errors import install_hint
    from jurist.tracking import INSTALL_HINT
    from jurist.view import VIEW_EXTRA

    assert (
        VIEW_EXTRA
        == install_hint("view")
        == 'pip install "jurist[view]" (in a clone of jurist: pip install ".[view]")'
    )
    assert '".[mlflow]"' in INSTALL_HINT
