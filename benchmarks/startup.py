"""Start-up of the installed ``jurist`` command: wall time and peak memory of short commands.

Runs each command as users do, the console script in a fresh process, ``--repeat`` times,
and prints the median and the fastest wall time and the median peak resident set size (the
process's own ``ru_maxrss``, read with ``os.wait4``) next to its targets (0.3 s and
60 MB for ``--help`` and ``gate``) and next to two references: ``python -c pass`` (the
interpreter alone) and ``python -c "import typer"`` (the CLI framework alone).

Bytecode caching is on in the children, as in an installed package (``PYTHONDONTWRITEBYTECODE``
is dropped from their environment); an untimed first run of each command writes the caches.
The ``gate`` row scores the trace sample of the repository's tests (``tests/data/gates``).
``jurist tasks`` loads every built-in task (their modules import DSPy); it has no target.

Usage:
    python benchmarks/startup.py [--repeat 10] [--json FILE]

``--json`` also writes the figures to a file (read by ``benchmarks/table.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GATES = ROOT / "tests" / "data" / "gates"
TARGET_SECONDS = 0.3
TARGET_MB = 60.0


def _jurist() -> str:
    beside = Path(sys.executable).with_name("jurist")
    found = str(beside) if beside.is_file() else shutil.which("jurist")
    if found is None:
        raise SystemExit("the jurist command is not installed (pip install -e .)")
    return found


ENV = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}


def measure(command: list[str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of one run of ``command`` in a fresh process."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(command)} exited with {process.returncode}")
    rss_kb = usage.ru_maxrss if sys.platform != "darwin" else usage.ru_maxrss / 1024
    return seconds, rss_kb / 1024


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=10, help="Runs of each command (default 10).")
    parser.add_argument("--json", type=Path, help="Also write the figures to this JSON file.")
    args = parser.parse_args()
    jurist = _jurist()
    gate = [str(GATES / "qaset.json"), str(GATES / "trace.sample.jsonl")]
    rows: list[tuple[str, list[str], bool]] = [
        ("python -c pass", [sys.executable, "-c", "pass"], False),
        ('python -c "import typer"', [sys.executable, "-c", "import typer"], False),
        ("jurist --help", [jurist, "--help"], True),
        ("jurist --version", [jurist, "--version"], True),
        ("jurist gate --help", [jurist, "gate", "--help"], True),
        ("jurist gate QASET TRACES", [jurist, "gate", *gate], True),
        ("jurist judge --help", [jurist, "judge", "--help"], True),
        ("jurist tasks", [jurist, "tasks"], False),
    ]
    print(f"{args.repeat} runs each, fresh process; targets {TARGET_SECONDS} s and {TARGET_MB:.0f} MB\n")
    print("| command | median s | fastest s | peak RSS MB | within target |")
    print("|---|---|---|---|---|")
    found: dict[str, dict[str, object]] = {}
    for label, command, targeted in rows:
        measure(command)  # writes the bytecode caches; not counted
        runs = [measure(command) for _ in range(args.repeat)]
        seconds = statistics.median(run[0] for run in runs)
        fastest = min(run[0] for run in runs)
        megabytes = statistics.median(run[1] for run in runs)
        verdict = (
            ("yes" if seconds <= TARGET_SECONDS and megabytes <= TARGET_MB else "no") if targeted else "-"
        )
        print(f"| `{label}` | {seconds:.3f} | {fastest:.3f} | {megabytes:.1f} | {verdict} |")
        found[label] = {"seconds": seconds, "fastest": fastest, "mb": megabytes, "targeted": targeted}
    if args.json:
        args.json.write_text(json.dumps(found, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
