"""SIGTERM stops ``jurist judge`` as Ctrl-C does: finished items committed, one line on stderr,
the manifest "stopped" by SIGTERM, exit 143, and the same command resumes to the same results,
in one process and with ``--workers`` (whose processes end with it)."""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import os
import signal
import subprocess
import threading

import psutil
import pytest

import jurist
from jurist.errors import ExitCode
from jurist.runner.workers import _serve
from jurist.testing import OpenAICompatibleServer
from scale_support import HeldReplies, exports, judge_command, recorded, wait_for, without_usage
from support import loopback_config, ragbench_answer, ragbench_rows, write_jsonl

ITEMS = 30
FREE = 5


@pytest.mark.slow
@pytest.mark.parametrize(
    ("workers", "target"),
    [("1", "process"), ("2", "process"), ("2", "group")],
    ids=["one-process", "workers-driver-only", "workers-whole-group"],
)
def test_sigterm_stops_cleanly_and_the_same_command_resumes(workers, target, tmp_path):
    data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(ITEMS))
    out = tmp_path / "run"
    replies = HeldReplies(ragbench_answer, free=FREE)
    with OpenAICompatibleServer(replies) as srv:
        command = judge_command(
            data,
            out,
            base_url=srv.base_url,
            cache=tmp_path / "cache",
            extra=["--workers", workers, "--concurrency", "2"],
        )
        # Its own session, so the whole group (driver and workers) can be signalled, as a
        # process manager or `kill -TERM -PGID` does.
        judge = subprocess.Popen(
            command,
            env=os.environ.copy(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        try:
            # FREE answers are given; every later request is held, so the run is judging now.
            wait_for(lambda: recorded(out) >= FREE or judge.poll() is not None, what=f"{FREE} recorded items")
            assert judge.poll() is None, judge.stderr.read().decode() if judge.stderr else ""
            children = psutil.Process(judge.pid).children(recursive=True)
            if target == "group":
                os.killpg(judge.pid, signal.SIGTERM)
            else:
                judge.send_signal(signal.SIGTERM)
            _, stderr = judge.communicate(timeout=120)
        finally:
            replies.release()
        assert judge.returncode == ExitCode.TERMINATED == 143, stderr.decode()
        lines = stderr.decode().strip().splitlines()
        assert lines == [
            f"stopped by SIGTERM: {FREE} items finished in this call are kept in {out}; "
            "run the same command again to resume"
        ]
        # Every judging process ended with the run.
        _, alive = psutil.wait_procs(children, timeout=30)
        assert not alive
        manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
        assert manifest["status"] == "stopped" and manifest["stopped_by"] == "SIGTERM"
        assert manifest["counts"] == {"ok": FREE, "failed": 0} and recorded(out) == FREE
        assert not [path.name for path in out.iterdir() if ".tmp" in path.name]

        srv.reset_count()
        resumed = subprocess.run(command, env=os.environ.copy(), capture_output=True, timeout=300)
        assert resumed.returncode == 0, resumed.stderr.decode()
        assert srv.requests <= ITEMS - FREE  # only the items not finished were asked
        finished = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
        assert finished["status"] == "finished" and finished["counts"] == {"ok": ITEMS, "failed": 0}
        assert "stopped_by" not in finished

        clean = loopback_config(srv.base_url, tmp_path / "cache-clean").model_copy(update={"concurrency": 2})
        jurist.judge("ragbench", data, clean, out=tmp_path / "clean", progress=False)
    assert without_usage(exports(out)) == without_usage(exports(tmp_path / "clean"))


def test_a_worker_stopped_by_sigterm_takes_the_drivers_later_stop_quietly(monkeypatch):
    """The race behind a traceback on stderr: SIGTERM ends a worker's loop while its inbox
    thread waits on the pipe, then the driver's "stop" arrives for a loop that has closed."""
    errors: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: errors.append(args.exc_value))
    driver, worker = multiprocessing.Pipe(duplex=True)
    before = signal.getsignal(signal.SIGTERM)

    def inbox() -> threading.Thread | None:
        return next((t for t in threading.enumerate() if t.name == "jurist-inbox"), None)

    def terminate_once_listening() -> None:
        wait_for(lambda: inbox() is not None, what="the worker's inbox thread")
        os.kill(os.getpid(), signal.SIGTERM)

    killer = threading.Thread(target=terminate_once_listening)
    killer.start()
    try:
        asyncio.run(_serve(worker, judge=None))  # type: ignore[arg-type]  # no item is sent
    finally:
        signal.signal(signal.SIGTERM, before)
    killer.join()
    listening = inbox()
    assert listening is not None  # the loop stopped on the signal, not on the pipe
    driver.send(("stop",))
    listening.join(10)
    assert not listening.is_alive()
    assert errors == []
