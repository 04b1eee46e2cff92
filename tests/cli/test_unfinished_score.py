"""``jurist score`` of an unfinished run (killed, stopped, or still being judged) says so, with
how many of how many items are judged, and exits non-zero (2; 4 while a process judges it),
unless ``--partial`` asks for a score of the items judged so far."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

import pytest

import jurist
from jurist.errors import ExitCode, UnfinishedRunError
from jurist.testing import OpenAICompatibleServer
from scale_support import HeldReplies, judge_command, recorded, start, wait_for
from support import ragbench_answer, ragbench_rows, run_cli, write_jsonl

ROOT = Path(__file__).resolve().parents[2]
GATES = ROOT / "tests" / "data" / "gates"
YAML_TASK = ROOT / "examples" / "context-faithfulness"

ITEMS = 40


def _one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in err, err
    return lines[0]


@pytest.mark.slow
def test_a_killed_run_is_refused_then_scored_partially_when_asked(tmp_path, capsys):
    data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(ITEMS))
    out = tmp_path / "run"
    replies = HeldReplies(ragbench_answer, free=4)
    with OpenAICompatibleServer(replies) as srv:
        command = judge_command(
            data, out, base_url=srv.base_url, cache=tmp_path / "cache", extra=["--concurrency", "2"]
        )
        judge = start(command)
        try:
            wait_for(lambda: recorded(out) >= 4 or judge.poll() is not None, what="4 recorded items")
            assert judge.poll() is None, judge.stderr.read().decode() if judge.stderr else ""
            judge.send_signal(signal.SIGKILL)
            judge.wait(timeout=30)
        finally:
            replies.release()
        assert recorded(out) == 4
        assert json.loads((out / "manifest.json").read_text())["status"] == "running"  # as the kill left it

        capsys.readouterr()
        assert run_cli(["score", "ragbench", str(out)]) == ExitCode.BAD_INPUT
        line = _one_error_line(capsys.readouterr().err)
        assert f"{out} is an unfinished run (4 of {ITEMS} items judged" in line
        assert "killed" in line and "--partial" in line and "`jurist judge`" in line

        assert run_cli(["score", "ragbench", str(out), "--partial", "--json"]) == ExitCode.OK
        captured = capsys.readouterr()
        summary = json.loads(captured.out)
        assert summary["items"] == 4
        assert summary["unfinished"] == [{"run": str(out), "status": "running", "judged": 4, "total": ITEMS}]
        assert captured.err.startswith("partial score of an unfinished run: ") and "4 of 40" in captured.err

        # The Python API refuses it the same way.
        with pytest.raises(UnfinishedRunError, match=f"4 of {ITEMS} items judged"):
            jurist.score("ragbench", out)
        assert jurist.score("ragbench", out, partial=True).summary["items"] == 4

        # Finished by the same judge command, it scores as any run.
        resumed = subprocess.run(command, capture_output=True, timeout=300)
        assert resumed.returncode == 0, resumed.stderr.decode()
    assert run_cli(["score", "ragbench", str(out), "--json"]) == ExitCode.OK
    summary = json.loads(capsys.readouterr().out)
    assert summary["items"] == ITEMS and "unfinished" not in summary


@pytest.mark.slow
def test_a_run_being_judged_now_is_refused_with_exit_4(tmp_path, capsys):
    data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(ITEMS))
    out = tmp_path / "run"
    replies = HeldReplies(ragbench_answer, free=3)
    with OpenAICompatibleServer(replies) as srv:
        command = judge_command(
            data, out, base_url=srv.base_url, cache=tmp_path / "cache", extra=["--concurrency", "2"]
        )
        judge = start(command)
        try:
            wait_for(lambda: recorded(out) >= 3 or judge.poll() is not None, what="3 recorded items")
            assert judge.poll() is None, judge.stderr.read().decode() if judge.stderr else ""
            capsys.readouterr()
            code = run_cli(["score", "ragbench", str(out)])
            line = _one_error_line(capsys.readouterr().err)
            partial = run_cli(["score", "ragbench", str(out), "--partial", "--json"])
            scored = json.loads(capsys.readouterr().out)
            assert judge.poll() is None  # the replies are held: it was judging all along
        finally:
            replies.release()
        stdout, stderr = judge.communicate(timeout=300)
        assert judge.returncode == 0, stderr.decode()
    assert code == ExitCode.RUN_LOCKED == 4
    assert f"3 of {ITEMS} items judged; still being judged by process {judge.pid}" in line
    assert "wait for it to finish" in line
    assert partial == ExitCode.OK and scored["items"] == 3
    assert scored["unfinished"][0]["status"] == "running" and scored["unfinished"][0]["judged"] == 3
    assert run_cli(["score", "ragbench", str(out)]) == ExitCode.OK


def _mark_unfinished(run_dir: Path, status: str) -> list[Path]:
    manifests = sorted(run_dir.rglob("manifest.json"))
    assert manifests, f"no run under {run_dir}"
    manifest = json.loads(manifests[-1].read_text(encoding="utf-8"))
    manifest["status"] = status
    manifests[-1].write_text(json.dumps(manifest), encoding="utf-8")
    return manifests


@pytest.mark.parametrize(
    ("task", "data", "extra"),
    [
        ("ragbench", "sample:ragbench", []),
        ("pairwise", "sample:pairs", ["--resamples", "0"]),
        ("rgb-rejection", "sample:rgb-judgments", []),
        ("heritage", "sample:heritage", []),
        (str(YAML_TASK / "task.yaml"), str(YAML_TASK / "rows.jsonl"), []),
        ("gates", str(GATES / "trace.sample.jsonl"), ["--gold", str(GATES / "qaset.json")]),
    ],
)
def test_every_task_refuses_to_score_an_unfinished_run(task, data, extra, tmp_path, capsys):
    out = tmp_path / "run"
    assert run_cli(["judge", task, data, "--out", str(out), "--no-progress", *extra]) == 0
    score_extra = [arg for arg in extra if arg != "--gold" and not arg.endswith("qaset.json")]
    _mark_unfinished(out, "stopped")
    capsys.readouterr()
    assert run_cli(["score", task, str(out), *score_extra]) == ExitCode.BAD_INPUT
    line = _one_error_line(capsys.readouterr().err)
    assert "is an unfinished run" in line and "stopped early" in line
    assert run_cli(["score", task, str(out), "--partial", *score_extra]) == ExitCode.OK
    assert "partial score of an unfinished run" in capsys.readouterr().err


def test_a_suite_with_one_unfinished_setting_is_refused(tmp_path, capsys):
    # An RGB suite: the runs are the settings' directories below the one scored.
    out = tmp_path / "rgb"
    args = ["rgb", "run", "--data-dir", "sample:rgb", "--out", str(out), "--limit", "2", "--no-progress"]
    assert run_cli([*args, "--sets", "counterfactual", "--languages", "en", "--no-chart"]) == 0
    manifests = _mark_unfinished(out, "interrupted")
    capsys.readouterr()
    assert run_cli(["score", "rgb", str(out)]) == ExitCode.BAD_INPUT
    line = _one_error_line(capsys.readouterr().err)
    assert f"{manifests[-1].parent} is an unfinished run" in line and "interrupted (Ctrl-C)" in line
    assert run_cli(["score", "rgb", str(out), "--partial"]) == ExitCode.OK
