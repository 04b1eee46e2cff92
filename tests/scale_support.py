"""Helpers of the tests that judge one run in several processes (local workers, Ray)."""

from __future__ import annotations

import csv
import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

TIMING_FIELDS = {"latency_s", "latency"}
"""Fields that measure time: they differ between any two runs, so they are left out of comparisons."""


def exports(run_dir: Path) -> dict[str, Any]:
    """A run's exports (``results.jsonl``, ``items.csv``, ``summary.json``) without timing fields."""
    results = [
        {key: value for key, value in json.loads(line).items() if key not in TIMING_FIELDS}
        for line in (run_dir / "results.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    with open(run_dir / "items.csv", encoding="utf-8", newline="") as handle:
        items = [
            {key: value for key, value in row.items() if key not in TIMING_FIELDS}
            for row in csv.DictReader(handle)
        ]
    summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    return {"results": results, "items": items, "summary": _without_timing(summary)}


USAGE_FIELDS = {"usage", "calls", "cache_hits", "prompt_tokens", "completion_tokens", "cost"}
"""Fields that say how each answer was got: a resumed run reads some answers from the response
cache that an uninterrupted one asked the provider for."""


def without_usage(found: dict[str, Any]) -> dict[str, Any]:
    """:func:`exports` without the fields of :data:`USAGE_FIELDS` and the run's status."""
    summary = {key: value for key, value in found["summary"].items() if key not in USAGE_FIELDS}
    summary["run"] = {key: value for key, value in summary.get("run", {}).items() if key != "status"}
    return {
        "results": [{k: v for k, v in row.items() if k not in USAGE_FIELDS} for row in found["results"]],
        "items": [{k: v for k, v in row.items() if k not in USAGE_FIELDS} for row in found["items"]],
        "summary": summary,
    }


def _without_timing(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _without_timing(item) for key, item in value.items() if key not in TIMING_FIELDS}
    if isinstance(value, list):
        return [_without_timing(item) for item in value]
    return value


def recorded_results(run_dir: Path) -> list[dict[str, Any]]:
    """Every result a run's store holds, in dataset order, without timing fields (for runs
    whose task writes no ``results.jsonl``)."""
    from jurist.runner import iter_run_results

    return [_without_timing(result.model_dump(mode="json")) for result in iter_run_results(run_dir)]


def longer_wins(body: dict[str, Any]) -> str:
    """A pairwise judge on the loopback server: the longer response wins (so both orders agree);
    a pair with ``UNSURE`` in it gets a choice that is no option (a failed item)."""
    from support import prompt_sections

    sections = prompt_sections(body)
    first, second = sections.get("response_1", ""), sections.get("response_2", "")
    if "UNSURE" in first + second:
        return "[[ ## choice ## ]]\nZ\n\n[[ ## reason ## ]]\nI cannot tell.\n\n[[ ## completed ## ]]"
    choice = "A" if len(first) >= len(second) else "B"
    return f"[[ ## choice ## ]]\n{choice}\n\n[[ ## reason ## ]]\nIt is longer.\n\n[[ ## completed ## ]]"


def write_pairs(path: Path, count: int) -> Path:
    """A pairs file of ``count`` pairs with gold labels; every fifth pair cannot be judged."""
    rows = []
    for n in range(count):
        short, long = f"Answer {n}.", f"Answer {n}, with the reasons why it holds."
        first, second = (long, short) if n % 2 else (short, long)
        rows.append(
            {
                "id": f"p{n}",
                "question": f"Question {n}?",
                "response_1": ("UNSURE " if n % 5 == 4 else "") + first,
                "response_2": second,
                "label": 1 if n % 2 else 2,
            }
        )
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def recorded(run_dir: Path) -> int:
    """Items committed to a run's ``results.sqlite`` so far (0 while it does not exist yet)."""
    db = run_dir / "results.sqlite"
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(db) as connection:
            return int(connection.execute("SELECT COUNT(*) FROM results").fetchone()[0])
    except sqlite3.OperationalError:
        return 0


def wait_for(condition: Any, *, timeout: float = 60.0, what: str = "the condition") -> None:
    """Poll ``condition()`` until it is true; fail the test after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def judge_command(data: Path, out: Path, *, base_url: str, cache: Path, extra: list[str]) -> list[str]:
    """``jurist judge ragbench`` against the loopback server, as a user types it."""
    return [
        sys.executable,
        "-m",
        "jurist",
        "judge",
        "ragbench",
        str(data),
        "--out",
        str(out),
        "--model",
        "openai/loopback-judge",
        "--api-base",
        base_url,
        "--cache-dir",
        str(cache),
        "--set",
        "api_key_env=JURIST_TEST_API_KEY",
        "--no-progress",
        *extra,
    ]


def start(command: list[str]) -> subprocess.Popen[bytes]:
    """Start ``command`` with this environment, its output captured."""
    return subprocess.Popen(command, env=os.environ.copy(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)


class DiesWhileStarting:
    """A judge maker for a :class:`~jurist.runner.JudgeRecipe` whose worker process is killed
    (SIGKILL) while it builds its judge, before it is ready: the first ``deaths`` processes
    that build one die, the later ones build the judge with ``make``. Each death claims one
    file ``death-N`` in ``marks`` (created exclusively, so two processes starting together
    never both take the same one)."""

    def __init__(self, make: Any, marks: Path, deaths: int) -> None:
        self.make = make
        self.marks = marks
        self.deaths = deaths

    def __call__(self, config: Any) -> Any:
        import signal

        for number in range(1, self.deaths + 1):
            try:
                os.close(os.open(self.marks / f"death-{number}", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            except FileExistsError:
                continue
            os.kill(os.getpid(), signal.SIGKILL)
        return self.make(config)


class HeldReplies:
    """A loopback responder that answers the first ``free`` requests at once and holds every
    later one until :meth:`release` (or ``hold_seconds``), so a test can act on a run that is
    certainly still judging, with exactly ``free`` answers given."""

    def __init__(self, answer: Any, free: int, hold_seconds: float = 90.0) -> None:
        import threading

        self.answer = answer
        self.free = free
        self.hold_seconds = hold_seconds
        self._count = 0
        self._guard = threading.Lock()
        self._released = threading.Event()

    def __call__(self, body: dict[str, Any]) -> str:
        with self._guard:
            self._count += 1
            held = self._count > self.free
        if held:
            self._released.wait(self.hold_seconds)
        return str(self.answer(body))

    def release(self) -> None:
        """Answer every held and later request."""
        self._released.set()
