"""A task published by another package: ``jurist-toxicity-plugin`` adds ``toxicity`` through the
``jurist.tasks`` entry point, and every verb serves it with no edit to jurist.

The package (``tests/tasks/plugin/``: a ``pyproject.toml`` and ``toxicity_task.py``) is
installed with pip into a temporary directory that is only ever put on ``PYTHONPATH`` /
``sys.path``, never into the environment. Its task is a :class:`DeclarativeTask` built
from a dict that overrides ``read`` (normalises the comments), ``program`` and
``postprocess`` (synonyms such as ``Non-toxic`` or ``OFFENSIVE`` map onto the labels) in
Python; optimization is driven by those same parts.

The loopback "model" answers each comment from :data:`ANSWERS` (keyed by the *normalised*
comment, so an un-normalised prompt gets no usable answer), so every figure is computed
by hand below.
"""

from __future__ import annotations

import csv
import importlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from jurist.testing import OpenAICompatibleServer
from support import prompt_sections

PLUGIN = Path(__file__).parent / "plugin"
MODULE = "toxicity_task"
KEY_ENV = "JURIST_PLUGIN_TEST_KEY"

# id, comment_text (as in the file), gold, what the loopback model answers -> the label it means.
DATA_ROWS = [
    ("c1", "You are an idiot.", "toxic", "toxic"),  # right
    ("c2", "Thanks for the  helpful\n  edit &amp; the sources, friend.", "not_toxic", "Non-toxic"),  # right
    ("c3", "I hate how stupid this article is", "toxic", "clean"),  # wrong: not_toxic
    ("c4", "Is this sarcasm???", "unsure", "Not sure"),  # right
    ("c5", "Nice work on the intro.", "not_toxic", "OFFENSIVE"),  # wrong: toxic
    ("c6", "Go away, troll.", "toxic", "Toxic."),  # right
]
LLM_VERDICTS = {
    "c1": "toxic",
    "c2": "not_toxic",
    "c3": "not_toxic",
    "c4": "unsure",
    "c5": "toxic",
    "c6": "toxic",
}
LLM_ACCURACY = 4 / 6  # c1, c2, c4, c6
BASELINE_ACCURACY = 1.0  # the regex rules get every row right (c2 only after normalising: no rule fires)
NORMALISED_C2 = "Thanks for the helpful edit & the sources, friend."

TRAIN_ROWS = [
    ("t1", "What an idiot move.", "toxic", "toxic"),  # right
    ("t2", "Great photo!", "not_toxic", "safe"),  # right (a synonym, through the plugin's adapter)
    ("t3", "Are you serious???", "unsure", "unsure"),  # right
    ("t4", "Thanks, that helped.", "not_toxic", "toxic"),  # wrong
]
DEV_ROWS = [
    ("d1", "You stupid troll.", "toxic", "toxic"),  # right
    ("d2", "Lovely day.", "not_toxic", "abusive"),  # wrong
]
DEV_ACCURACY = 1 / 2

ANSWERS = {
    " ".join(text.split()).replace("&amp;", "&"): answer
    for _, text, _, answer in DATA_ROWS + TRAIN_ROWS + DEV_ROWS
}
assert NORMALISED_C2 in ANSWERS


def responder(body: dict[str, Any]) -> str:
    comment = prompt_sections(body).get("comment", "").strip()
    answer = ANSWERS.get(comment, f"no answer for {comment!r}")
    return f"[[ ## verdict ## ]]\n{answer}\n\n[[ ## completed ## ]]"


def write_csv(path: Path, rows: list[tuple[str, str, str, str]]) -> Path:
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "comment_text", "label"])
        writer.writerows((row_id, text, gold) for row_id, text, gold, _ in rows)
    return path


# ---------------------------------------------------------------------- installing the plugin


def _can_build_wheels() -> bool:
    """Whether setuptools builds wheels offline without build isolation (it needs the ``wheel``
    package before setuptools 70.1, which ships its own ``bdist_wheel``)."""
    if importlib.util.find_spec("wheel") is not None:
        return True
    import setuptools

    major, minor = (int(part) for part in setuptools.__version__.split(".")[:2])
    return (major, minor) >= (70, 1)


def _hand_built_wheel(package: Path, dist: Path) -> Path:
    """The wheel setuptools would build from ``package`` (one module and its entry point),
    written with :mod:`zipfile` when no wheel builder is installed."""
    name, version = "jurist_toxicity_plugin", "0.1.0"
    info = f"{name}-{version}.dist-info"
    files = {
        f"{MODULE}.py": (package / f"{MODULE}.py").read_text(encoding="utf-8"),
        f"{info}/METADATA": "Metadata-Version: 2.1\nName: jurist-toxicity-plugin\n"
        f"Version: {version}\nRequires-Dist: jurist\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: jurist-tests\nRoot-Is-Purelib: true\n"
        "Tag: py3-none-any\n",
        f"{info}/entry_points.txt": f"[jurist.tasks]\ntoxicity = {MODULE}:ToxicityTask\n",
        f"{info}/top_level.txt": f"{MODULE}\n",
    }
    files[f"{info}/RECORD"] = "".join(f"{path},,\n" for path in files) + f"{info}/RECORD,,\n"
    wheel = dist / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, text in files.items():
            archive.writestr(path, text)
    return wheel


def install_plugin(root: Path) -> Path:
    """pip-install the plugin (no network, no dependencies) into ``root/site``; return it."""
    package = root / "jurist-toxicity-plugin"
    shutil.copytree(PLUGIN, package, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "build"))
    target = package if _can_build_wheels() else _hand_built_wheel(package, root)
    site = root / "site"
    command = [sys.executable, "-m", "pip", "install", "--no-deps", "--no-build-isolation", "--no-index"]
    command += ["--disable-pip-version-check", "--quiet", "--target", str(site), str(target)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert (site / f"{MODULE}.py").is_file()
    assert any((info / "entry_points.txt").is_file() for info in site.glob("*.dist-info"))
    return site


@pytest.fixture(scope="module")
def plugin_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return install_plugin(tmp_path_factory.mktemp("plugin"))


@pytest.fixture
def server() -> Iterator[OpenAICompatibleServer]:
    with OpenAICompatibleServer(responder) as srv:
        yield srv


@pytest.fixture
def files(tmp_path: Path, server: OpenAICompatibleServer, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """DATA, TRAIN and DEV as CSV files, and the loopback judge config as YAML."""
    monkeypatch.setenv(KEY_ENV, "loopback-test-key")
    config = tmp_path / "loopback.yaml"
    config.write_text(
        "model: openai/loopback-judge\n"
        f"api_base: {server.base_url}\n"
        f"api_key_env: {KEY_ENV}\n"
        f"cache_dir: {tmp_path / 'cache'}\n"
        "num_retries: 1\n"
        "retry_max_wait: 0.1\n"
        "parse_retries: 1\n"
        "timeout: 10\n",
        encoding="utf-8",
    )
    return {
        "data": write_csv(tmp_path / "comments.csv", DATA_ROWS),
        "train": write_csv(tmp_path / "train.csv", TRAIN_ROWS),
        "dev": write_csv(tmp_path / "dev.csv", DEV_ROWS),
        "config": config,
    }


@pytest.fixture
def plugin_importable(plugin_site: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """``plugin_site`` on ``sys.path`` for this test only (entry points found through it)."""
    monkeypatch.syspath_prepend(str(plugin_site))  # also invalidates the import caches
    try:
        yield plugin_site
    finally:
        sys.modules.pop(MODULE, None)
        importlib.invalidate_caches()


# ---------------------------------------------------------------------- through the Python API


def test_entry_point_task_serves_every_verb_in_python(plugin_importable, files, server, tmp_path):
    # The verbs from jurist.tasks: ``jurist.optimization`` is the jurist.optimization subpackage once
    # that has been imported (judging imports it), not the verb.
    from jurist.judges.config import load_config
    from jurist.tasks import get_task, task_names
    from jurist.tasks.declarative import DeclarativeTask
    from jurist.verbs import calibrate, judge, optimize, prompt, score

    assert "toxicity" in task_names()
    task = get_task("toxicity")
    assert isinstance(task, DeclarativeTask)
    assert Path(sys.modules[MODULE].__file__ or "").parent == plugin_importable
    assert task.source == f"entry point {MODULE}:ToxicityTask"
    described = task.describe()
    assert list(described["inputs"]) == ["comment"] and list(described["outputs"]) == ["verdict"]
    assert {"accuracy", "kappa"} <= set(described["metrics"])
    assert set(described["verbs"]) == {"judge", "score", "calibrate", "optimize", "prompt", "label"}

    baseline = judge("toxicity", files["data"], out=tmp_path / "run", progress=False)
    assert baseline.summary["ok"] == 6 and baseline.summary["usage"]["calls"] == 0
    assert baseline.summary["agreement"]["accuracy"] == pytest.approx(BASELINE_ACCURACY)
    assert server.requests == 0

    run = judge("toxicity", files["data"], files["config"], out=tmp_path / "run2", progress=False)
    assert (run.summary["ok"], run.summary["failed"]) == (6, 0)
    verdicts = dict(zip(run["id"].astype(str), run["verdict"], strict=True))
    assert verdicts == LLM_VERDICTS
    scored = score("toxicity", tmp_path / "run2", gold=files["data"])
    assert scored.summary["agreement"]["accuracy"] == pytest.approx(LLM_ACCURACY)

    calibration = calibrate(
        "toxicity",
        [files["data"]],
        ["baseline", files["config"]],
        out=tmp_path / "cal",
        n_resamples=50,
    )
    accuracy = dict(zip(calibration.leaderboard["judge"], calibration.leaderboard["accuracy"], strict=True))
    assert accuracy == {"baseline": pytest.approx(BASELINE_ACCURACY), "loopback": pytest.approx(LLM_ACCURACY)}

    result = optimize(
        "toxicity",
        files["train"],
        files["dev"],
        files["config"],
        out=tmp_path / "art.json",
        optimizer="bootstrap",
    )
    assert result.artifact.task == "toxicity"
    assert result.artifact.scores["dev_before"].score == pytest.approx(DEV_ACCURACY)
    assert result.artifact.program["predict"]["demos"]  # t1-t3 were answered right

    with_program = load_config(files["config"], {"program": str(result.path)})
    rerun = judge("toxicity", files["data"], with_program, out=tmp_path / "run3", progress=False)
    assert rerun.summary["failed"] == 0
    assert rerun.summary["agreement"]["accuracy"] == pytest.approx(LLM_ACCURACY)

    before = server.requests
    calls = prompt("toxicity", files["data"], files["config"], row=1)
    assert server.requests == before
    assert [call["item"] for call in calls] == ["c2"]
    assert NORMALISED_C2 in calls[0]["messages"][-1]["content"]


# ---------------------------------------------------------------------- through the command line


def jurist_cli(site: Path, *args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``python -m jurist ARGS`` in a subprocess that finds the plugin only through PYTHONPATH."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(site), env.get("PYTHONPATH", "")) if p)
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    command = [sys.executable, "-m", "jurist", *(str(a) for a in args)]
    return subprocess.run(command, capture_output=True, text=True, cwd=cwd, env=env, timeout=120)


def ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, f"exit {result.returncode}\n{result.stdout}\n{result.stderr}"
    return result.stdout


@pytest.mark.slow
def test_entry_point_task_serves_every_verb_on_the_command_line(plugin_site, files, server, tmp_path):
    assert importlib.util.find_spec(MODULE) is None  # installed nowhere but in plugin_site

    def cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
        return jurist_cli(plugin_site, *args, cwd=tmp_path)

    listing = ok(cli("tasks"))
    assert any(line.startswith("toxicity ") for line in listing.splitlines()), listing
    shown = ok(cli("tasks", "show", "toxicity"))
    assert f"entry point {MODULE}:ToxicityTask" in shown
    for part in ("inputs:", "comment:", "outputs:", "verdict:", "metrics:", "accuracy:", "kappa:"):
        assert part in shown, shown

    data, config = files["data"], files["config"]
    ok(cli("judge", "toxicity", data, "--out", tmp_path / "run", "--no-progress"))
    baseline = json.loads((tmp_path / "run" / "summary.json").read_text(encoding="utf-8"))
    assert baseline["agreement"]["accuracy"] == pytest.approx(BASELINE_ACCURACY)
    assert server.requests == 0

    ok(cli("judge", "toxicity", data, "--out", tmp_path / "run2", "-c", config, "--no-progress"))
    assert server.requests == len(DATA_ROWS)
    summary = json.loads(ok(cli("score", "toxicity", tmp_path / "run2", "--gold", data, "--json")))
    assert (summary["ok"], summary["failed"]) == (6, 0)
    assert summary["agreement"]["accuracy"] == pytest.approx(LLM_ACCURACY)

    ok(
        cli(
            "calibrate", "toxicity", "--gold", data, "-c", "baseline", "-c", config, "--out", tmp_path / "cal"
        )
    )
    calibration = json.loads((tmp_path / "cal" / "calibration.json").read_text(encoding="utf-8"))
    rows = calibration["leaderboard"]
    accuracy = {row["judge"]: row["accuracy"] for row in rows}
    assert accuracy == {"baseline": pytest.approx(BASELINE_ACCURACY), "loopback": pytest.approx(LLM_ACCURACY)}

    artifact = tmp_path / "art.json"
    train, dev = files["train"], files["dev"]
    ok(cli("optimize", "toxicity", "--train", train, "--dev", dev, "-c", config, "--out", artifact))
    compiled = json.loads(artifact.read_text(encoding="utf-8"))
    assert compiled["task"] == "toxicity" and compiled["optimizer"]["name"] == "bootstrap"
    assert compiled["scores"]["dev_before"]["score"] == pytest.approx(DEV_ACCURACY)

    run3 = tmp_path / "run3"
    ok(cli("judge", "toxicity", data, "--out", run3, "-c", config, "--program", artifact, "--no-progress"))
    rerun = json.loads((run3 / "summary.json").read_text(encoding="utf-8"))
    assert rerun["failed"] == 0 and rerun["agreement"]["accuracy"] == pytest.approx(LLM_ACCURACY)

    before = server.requests
    shown_prompt = ok(cli("prompt", "toxicity", data, "--row", "1", "-c", config))
    assert NORMALISED_C2 in shown_prompt
    assert server.requests == before
