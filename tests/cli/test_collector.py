"""The ``jurist`` process collects garbage less often; ``main(argv)`` in a host process does not."""

from __future__ import annotations

import gc
import subprocess
import sys

import pytest

from jurist.cli import main


def test_main_with_arguments_leaves_the_host_process_collector_alone():
    thresholds, frozen = gc.get_threshold(), gc.get_freeze_count()
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert gc.get_threshold() == thresholds
    assert gc.get_freeze_count() == frozen


def test_the_command_line_process_raises_the_thresholds():
    code = (
        "import gc, sys\n"
        "sys.argv = ['jurist', '--version']\n"
        "from jurist.cli import main, _GC_THRESHOLDS\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as exc:\n"
        "    print(exc.code, gc.get_threshold() == _GC_THRESHOLDS)\n"
    )
    command = [sys.executable, "-c", code]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.split()[-2:] == ["0", "True"]
