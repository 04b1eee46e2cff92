"""A real MLflow tracking server on 127.0.0.1 for the tracking tests (one per module)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

# Nothing of MLflow's may reach the network: no telemetry, no LiteLLM price-list download
# (the server imports LiteLLM, which would otherwise fetch it while importing), and no
# background job runner (it is not needed to log runs and costs seconds at start-up).
SERVER_ENV = {
    "MLFLOW_DISABLE_TELEMETRY": "true",
    "DO_NOT_TRACK": "true",
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false",
}


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on (now)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def unused_port() -> int:
    """A port on 127.0.0.1 with no server behind it: connecting is refused."""
    return free_port()


def _stop(process: subprocess.Popen[bytes]) -> None:
    """Stop the server and the workers it started (its own process group)."""
    if process.poll() is not None:
        return
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)


@pytest.fixture(scope="module")
def tracking_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``mlflow server`` with a SQLite store and served artifacts; yields its tracking URI."""
    root = tmp_path_factory.mktemp("mlflow-server")
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "mlflow",
        "server",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--workers",
        "1",
        "--backend-store-uri",
        f"sqlite:///{root / 'mlflow.db'}",
        "--serve-artifacts",
        "--artifacts-destination",
        str(root / "artifacts"),
    ]
    log = (root / "server.log").open("wb")
    process = subprocess.Popen(
        command,
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=root,
        env={**os.environ, **SERVER_ENV},
        start_new_session=True,
    )
    uri = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                pytest.fail(f"mlflow server exited ({process.returncode}):\n{_tail(root / 'server.log')}")
            try:
                with urllib.request.urlopen(f"{uri}/health", timeout=1) as reply:
                    if reply.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"mlflow server did not answer /health in 60 s:\n{_tail(root / 'server.log')}")
            time.sleep(0.2)
        yield uri
    finally:
        _stop(process)
        log.close()


def _tail(path: Path) -> str:
    return "\n".join(path.read_text(encoding="utf-8", errors="replace").splitlines()[-30:])
