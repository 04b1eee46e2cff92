"""A full disk and a read-only response cache are one error line that names the file or the
directory (exit 2), and a write that fails leaves no temporary file behind."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from jurist.cli import describe_error
from jurist.errors import ExitCode
from jurist.runner.engine import _write_manifest
from jurist.testing import OpenAICompatibleServer
from scale_support import judge_command, recorded
from support import ragbench_answer, ragbench_rows, write_jsonl

IS_ROOT = getattr(os, "geteuid", lambda: -1)() == 0


def _mount(*args: str) -> None:
    done = subprocess.run(["mount", *args], capture_output=True, text=True)
    if done.returncode:
        pytest.skip(f"cannot mount here (mount {' '.join(args)}): {done.stderr.strip()}")


@contextmanager
def _tmpfs(path: Path, size: str) -> Iterator[Path]:
    """A tiny file system of its own at ``path`` (a disk that fills up), unmounted after."""
    if not IS_ROOT or shutil.which("mount") is None:
        pytest.skip("a disk that fills up is a tmpfs of its own, and mounting one needs root")
    path.mkdir()
    _mount("-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path))
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True)


@contextmanager
def _read_only(path: Path) -> Iterator[Path]:
    """``path`` made read-only: a read-only bind mount as root (who may write anywhere
    else), or every directory and file without write permission otherwise."""
    if IS_ROOT:
        if shutil.which("mount") is None:
            pytest.skip("no mount command to make a read-only location")
        _mount("--bind", str(path), str(path))
        try:
            _mount("-o", "remount,bind,ro", str(path))
            yield path
        finally:
            subprocess.run(["umount", "-l", str(path)], capture_output=True)
        return
    if sys.platform == "win32":
        pytest.skip("read-only directories are made with POSIX permissions here")
    entries = [path, *path.rglob("*")]
    for entry in entries:
        entry.chmod(0o555 if entry.is_dir() else 0o444)
    try:
        yield path
    finally:
        for entry in entries:
            entry.chmod(0o755 if entry.is_dir() else 0o644)


def _one_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in stderr, stderr
    return lines[0]


@pytest.mark.slow
def test_a_disk_that_fills_up_names_the_file_and_the_run_resumes(tmp_path):
    with _tmpfs(tmp_path / "disk", "256k") as disk:
        data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(200))
        out = disk / "run"
        with OpenAICompatibleServer(ragbench_answer) as srv:
            command = judge_command(data, out, base_url=srv.base_url, cache=tmp_path / "cache", extra=[])
            full = subprocess.run(command, env=os.environ.copy(), capture_output=True, text=True, timeout=300)
            assert full.returncode == ExitCode.BAD_INPUT, full.stderr
            line = _one_line(full.stderr)
            # The file that could not be written is named (the results or the manifest).
            assert f"{out}{os.sep}" in line and ("full" in line or "no space" in line), line
            assert not [path.name for path in out.iterdir() if ".tmp" in path.name]
            json.loads((out / "manifest.json").read_text(encoding="utf-8"))  # whole, never half written
            before = recorded(out)
            assert before < 200

            # With room again, the same command finishes the run; items judged before are not
            # asked again (recorded, or answered from the response cache).
            _mount("-o", "remount,size=16m", str(disk))
            srv.reset_count()
            again = subprocess.run(
                command, env=os.environ.copy(), capture_output=True, text=True, timeout=300
            )
            assert again.returncode == 0, again.stderr
            assert srv.requests <= 200 - before
        manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
        assert manifest["status"] == "finished" and manifest["counts"] == {"ok": 200, "failed": 0}


def test_a_manifest_write_on_a_full_disk_names_the_file_and_keeps_the_last_one(tmp_path):
    with _tmpfs(tmp_path / "disk", "64k") as disk:
        run = disk / "run"
        run.mkdir()
        _write_manifest(run, {"status": "running"})
        previous = (run / "manifest.json").read_bytes()
        (disk / "filler").write_bytes(b"\0" * (48 * 1024))  # leaves less room than the manifest needs
        with pytest.raises(OSError) as raised:
            _write_manifest(run, {"status": "finished", "config": "x" * (32 * 1024)})
        assert raised.value.filename == str(run / "manifest.json")
        message, code = describe_error(raised.value) or ("", 0)
        assert (
            message == f"{run / 'manifest.json'}: no space left on the device" and code == ExitCode.BAD_INPUT
        )
        assert (run / "manifest.json").read_bytes() == previous
        assert sorted(path.name for path in run.iterdir()) == ["manifest.json"]  # no temporary file


@pytest.mark.parametrize("filled", [False, True], ids=["empty-cache", "cache-with-answers"])
def test_a_read_only_cache_directory_is_named(filled, tmp_path):
    data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(3))
    cache = tmp_path / "cache"
    cache.mkdir()
    with OpenAICompatibleServer(ragbench_answer) as srv:
        if filled:  # answers written before the directory became read-only
            first = judge_command(data, tmp_path / "first", base_url=srv.base_url, cache=cache, extra=[])
            assert (
                subprocess.run(first, env=os.environ.copy(), capture_output=True, timeout=300).returncode == 0
            )
        shards = sorted(path.relative_to(cache) for path in cache.rglob("*"))
        with _read_only(cache):
            srv.reset_count()
            command = judge_command(data, tmp_path / "run", base_url=srv.base_url, cache=cache, extra=[])
            done = subprocess.run(command, env=os.environ.copy(), capture_output=True, text=True, timeout=300)
            assert srv.requests == 0
        assert done.returncode == ExitCode.BAD_INPUT, done.stderr
        line = _one_line(done.stderr)
        assert f"{cache.resolve()}, field 'cache_dir'" in line and "--cache-dir" in line
        assert "read-only file system" in line or "permission denied" in line
        # Nothing was taken for damage and moved aside.
        assert sorted(path.relative_to(cache) for path in cache.rglob("*")) == shards
