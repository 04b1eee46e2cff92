"""Bad input, for every command that reads a data file: one line naming the file (and the row
and field where known), exit status 2, no traceback, and nothing already done is lost. The
line quotes at most about 200 characters of a value, however long the value.

Inputs that are not bad are accepted: a UTF-8 byte-order mark, CRLF line ends, columns a
task does not use (ignored), and a 10 MB field (there is no per-field size limit).
"""

from __future__ import annotations

import csv
import io
import json
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from support import ragbench_rows, run_cli

ROOT = Path(__file__).resolve().parents[2]
YAML_TASK = ROOT / "examples" / "context-faithfulness" / "task.yaml"
GATE_GOLD = ROOT / "tests" / "data" / "gates" / "qaset.json"
GATE_TRACES = ROOT / "tests" / "data" / "gates" / "trace.sample.jsonl"


def _pairs(count: int) -> list[dict]:
    return [
        {
            "id": f"p{i}",
            "question": f"Which answer is better, {i}?",
            "response_1": f"A short answer {i}.",
            "response_2": f"A much longer and more helpful answer number {i}.",
            "label": "2",
        }
        for i in range(count)
    ]


def _rejection_rows(count: int) -> list[dict]:
    return [
        {"id": f"r{i}", "question": f"Where is {i}?", "answer": "I can not answer.", "rejects": True}
        for i in range(count)
    ]


def _heritage_rows(count: int) -> list[dict]:
    sample = ROOT / "src" / "jurist" / "datasets" / "samples" / "heritage_gold.jsonl"
    return [json.loads(line) for line in sample.read_text(encoding="utf-8").splitlines()[:count]]


def _traces(count: int) -> list[dict]:
    return [{"qid": f"q{i % 4 + 1}", "answer": "not in context", "citations": []} for i in range(count)]


@dataclass(frozen=True)
class Command:
    """One input-taking command: its arguments for a data file, valid rows, and the row field
    a wrong type goes into (with the value)."""

    args: Callable[[Path, Path], list[str]]
    rows: Callable[[int], list[dict]]
    wrong: tuple[str, object]
    id_field: str = "id"
    judges: bool = True  # writes a run directory into --out
    jsonl_only: bool = False  # reads JSON Lines whatever the suffix (the gate's traces)


COMMANDS = {
    "judge ragbench": Command(
        lambda data, out: ["judge", "ragbench", str(data), "--out", str(out), "--no-progress"],
        ragbench_rows,
        ("documents", 5),
    ),
    "judge pairwise": Command(
        lambda data, out: ["judge", "pairwise", str(data), "--out", str(out), "--no-progress"],
        _pairs,
        ("response_1", {"not": "text"}),
    ),
    "judge rgb-rejection": Command(
        lambda data, out: ["judge", "rgb-rejection", str(data), "--out", str(out), "--no-progress"],
        _rejection_rows,
        ("rejects", "perhaps"),
    ),
    "judge heritage-ner": Command(
        lambda data, out: ["judge", "heritage-ner", str(data), "--out", str(out), "--no-progress"],
        _heritage_rows,
        ("ner_annotations", "none"),
    ),
    "judge yaml task": Command(
        lambda data, out: ["judge", str(YAML_TASK), str(data), "--out", str(out), "--no-progress"],
        ragbench_rows,
        ("adherence_score", "perhaps"),
    ),
    "calibrate ragbench": Command(
        lambda data, out: [
            "calibrate",
            "ragbench",
            "--gold",
            str(data),
            "--out",
            str(out),
            "--resamples",
            "0",
        ],
        ragbench_rows,
        ("documents", 5),
    ),
    "prompt ragbench": Command(
        lambda data, out: ["prompt", "ragbench", str(data)], ragbench_rows, ("documents", 5), judges=False
    ),
    "optimize ragbench": Command(
        lambda data, out: [
            "optimize",
            "ragbench",
            "--train",
            str(data),
            "--dev",
            str(data),
            "--out",
            str(out / "artifact.json"),
            "--model",
            "openai/never-called",
            "--api-base",
            "http://127.0.0.1:9/v1",
        ],
        ragbench_rows,
        ("documents", 5),
        judges=False,
    ),
    "gate traces": Command(
        lambda data, out: ["gate", str(GATE_GOLD), str(data), "--out", str(out / "report.md")],
        _traces,
        ("answer", 5),
        id_field="",
        judges=False,
        jsonl_only=True,
    ),
}
"""Every command that reads data (``score`` reads run directories: see test_score_bad_run)."""


def _jsonl(rows: list[dict]) -> str:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


def _bad_file(kind: str, command: Command, folder: Path) -> tuple[Path, list[str]]:
    """A bad file of ``kind`` and the words its error message must hold (besides the file name)."""
    rows = command.rows(2)
    good = folder / "data.jsonl"
    if kind == "not utf-8":
        good.write_bytes(_jsonl(rows[:1]).encode() + b'{"id": "caf\xe9"}\n')
        return good, ["not UTF-8", "line 2", "byte offset"]
    if kind == "corrupt xlsx":
        path = folder / "data.xlsx"
        path.write_bytes(b"PK\x03\x04 this is not a workbook" * 8)
        return path, ["JSON" if command.jsonl_only else "XLSX"]
    if kind == "corrupt parquet":
        path = folder / "data.parquet"
        path.write_bytes(b"PAR1 truncated")
        return path, ["JSON" if command.jsonl_only else "Parquet"]
    if kind == "directory":
        path = folder / "data.jsonl"
        path.mkdir()
        return path, ["directory"]
    if kind == "missing":
        return folder / "nowhere.jsonl", ["not found"]
    if kind == "empty":
        good.write_text("", encoding="utf-8")
        return good, ["no "]
    if kind == "blank lines":
        good.write_text("\n   \n\r\n", encoding="utf-8")
        return good, ["no "]
    if kind == "not JSON":
        good.write_text(_jsonl(rows[:1]) + '{"id": "x", \n', encoding="utf-8")
        return good, ["line 2", "JSON"]
    if kind == "duplicate ids":
        if not command.id_field:
            pytest.skip("traces have no id")
        twice = [rows[0], rows[1], rows[0]]
        good.write_text(_jsonl(twice), encoding="utf-8")
        return good, ["line 3", "line 1"]
    if kind == "wrong type":
        field, value = command.wrong
        rows[1] = {**rows[1], field: value}
        good.write_text(_jsonl(rows), encoding="utf-8")
        return good, ["line 2", field]
    if kind == "long wrong value":
        field, value = command.wrong
        rows[1] = {**rows[1], field: _long(value)}
        good.write_text(_jsonl(rows), encoding="utf-8")
        return good, ["line 2", field]
    if kind == "key given twice":  # Python's json would keep the last value without a word
        field = command.wrong[0]
        second = json.dumps(rows[1], ensure_ascii=False)[:-1]
        second += f", {json.dumps(field)}: {json.dumps(rows[1].get(field, 'x'))}}}"
        good.write_text(_jsonl(rows[:1]) + second + "\n", encoding="utf-8")
        return good, ["line 2", repr(field), "twice"]
    if kind == "deep unread value":  # 1,000 levels in a column no task reads
        deep = "[" * 1000 + "]" * 1000
        second = json.dumps(rows[1], ensure_ascii=False)[:-1] + f', "not_a_column": {deep}}}'
        good.write_text(_jsonl(rows[:1]) + second + "\n", encoding="utf-8")
        return good, ["line 2", "nested deeper than 100"]
    if kind == "NFC and NFD ids":  # one id, two spellings: normalised to NFC, so a repeat
        if not command.id_field:
            pytest.skip("traces have no id")
        rows[0] = {**rows[0], command.id_field: unicodedata.normalize("NFC", "café-1")}
        rows[1] = {**rows[1], command.id_field: unicodedata.normalize("NFD", "café-1")}
        good.write_text(_jsonl(rows), encoding="utf-8")
        return good, ["line 2", "line 1", "café-1"]
    raise AssertionError(kind)


def _long(value: object) -> object:
    """``value`` made huge, and still of the wrong type."""
    if isinstance(value, str):
        return value * 50_000
    if isinstance(value, int):
        return [value] * 50_000
    if isinstance(value, dict):
        return {key: str(item) * 50_000 for key, item in value.items()}
    raise AssertionError(value)


BAD = [
    "not utf-8",
    "corrupt xlsx",
    "corrupt parquet",
    "directory",
    "missing",
    "empty",
    "blank lines",
    "not JSON",
    "duplicate ids",
    "wrong type",
    "long wrong value",
    "key given twice",
    "deep unread value",
    "NFC and NFD ids",
]
QUOTED = 300
"""The most characters an error line holds besides the data file's name."""


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(folder)): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file() and not path.name.startswith(".jurist.lock")
    }


@pytest.mark.parametrize("kind", BAD)
@pytest.mark.parametrize("name", list(COMMANDS))
def test_bad_input_is_one_line_exit_2_and_keeps_what_was_done(
    name: str, kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    command = COMMANDS[name]
    out = tmp_path / "out"
    out.mkdir()
    before: dict[str, bytes] = {}
    if command.judges and kind == "wrong type":  # a finished run in --out must survive the bad input
        done = tmp_path / "done.jsonl"
        done.write_text(_jsonl(command.rows(2)), encoding="utf-8")
        assert run_cli(command.args(done, out)) in (0, 1), capsys.readouterr().err
        before = _snapshot(out)
        assert before
        capsys.readouterr()
    data, words = _bad_file(kind, command, tmp_path)

    code = run_cli(command.args(data, out))

    err = capsys.readouterr().err
    assert code == 2, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "Traceback" not in err
    assert data.name in lines[0], err
    assert len(lines[0]) <= len(str(data)) + QUOTED, lines[0][:2000]
    for word in words:
        assert word in lines[0], (word, lines[0])
    if before:
        assert _snapshot(out) == before


def _accepted_file(kind: str, command: Command, folder: Path) -> Path:
    rows = command.rows(3)
    path = folder / "data.jsonl"
    if kind == "byte-order mark":
        path.write_bytes(b"\xef\xbb\xbf" + _jsonl(rows).encode())
    elif kind == "CRLF":
        path.write_bytes(_jsonl(rows).replace("\n", "\r\n").encode())
    elif kind == "unknown columns":
        path.write_text(
            _jsonl([{**row, "not_a_column": [1, 2], "note": "x"} for row in rows]), encoding="utf-8"
        )
    elif kind == "10 MB field":
        path.write_text(_jsonl([{**row, "metadata": "x" * 10_000_000} for row in rows]), encoding="utf-8")
    return path


@pytest.mark.parametrize("kind", ["byte-order mark", "CRLF", "unknown columns", "10 MB field"])
@pytest.mark.parametrize("name", ["judge ragbench", "judge pairwise", "judge yaml task", "gate traces"])
def test_not_bad_input_is_accepted(name: str, kind: str, tmp_path: Path, capsys) -> None:
    command = COMMANDS[name]
    data = _accepted_file(kind, command, tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    code = run_cli(command.args(data, out))
    err = capsys.readouterr().err
    assert code in (0, 1), err  # 1: the gate's verdict on these traces, not an error
    assert "error:" not in err


def test_csv_and_tsv_with_bom_and_crlf_are_read(tmp_path: Path, capsys) -> None:
    rows = _pairs(3)
    for suffix, sep in ((".csv", ","), (".tsv", "\t")):
        text = io.StringIO()
        writer = csv.DictWriter(text, fieldnames=list(rows[0]), delimiter=sep, lineterminator="\r\n")
        writer.writeheader()
        writer.writerows(rows)
        data = tmp_path / f"pairs{suffix}"
        data.write_bytes(b"\xef\xbb\xbf" + text.getvalue().encode())
        out = tmp_path / f"out{suffix}"
        assert run_cli(["judge", "pairwise", str(data), "--out", str(out), "--no-progress"]) == 0
        summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
        assert summary["items"] == 6 and summary["failed"] == 0
    capsys.readouterr()


def test_rgb_run_with_bad_or_no_files(tmp_path: Path, capsys) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    assert (
        run_cli(["rgb", "run", "--data-dir", str(empty), "--out", str(tmp_path / "o1"), "--no-progress"]) == 2
    )
    err = capsys.readouterr().err
    assert err.startswith("error: ") and str(empty) in err and "nothing to run" in err
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "en.json").write_bytes(b'{"id": 0, "query": "caf\xe9"}\n')
    assert (
        run_cli(["rgb", "run", "--data-dir", str(broken), "--out", str(tmp_path / "o2"), "--no-progress"])
        == 2
    )
    err = capsys.readouterr().err
    assert "en.json" in err and "not UTF-8" in err and "Traceback" not in err


def test_score_bad_run(tmp_path: Path, capsys) -> None:
    # A directory that is no run, a missing one, and a run whose results.sqlite is truncated.
    assert run_cli(["score", "ragbench", str(tmp_path)]) == 2
    assert str(tmp_path) in capsys.readouterr().err
    assert run_cli(["score", "ragbench", str(tmp_path / "nowhere")]) == 2
    assert "nowhere" in capsys.readouterr().err
    data = tmp_path / "data.jsonl"
    data.write_text(_jsonl(ragbench_rows(3)), encoding="utf-8")
    run = tmp_path / "run"
    assert run_cli(["judge", "ragbench", str(data), "--out", str(run), "--no-progress"]) == 0
    capsys.readouterr()
    sqlite = run / "results.sqlite"
    sqlite.write_bytes(sqlite.read_bytes()[:100])
    for name in ("results.sqlite-wal", "results.sqlite-shm"):
        (run / name).unlink(missing_ok=True)
    code = run_cli(["score", "ragbench", str(run)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith("error: ") and "Traceback" not in err and "results.sqlite" in err


@pytest.mark.parametrize("kind", ["existing file", "under a file", "read-only directory"])
def test_unwritable_out_is_one_line(kind: str, tmp_path: Path, capsys) -> None:
    import os

    data = tmp_path / "data.jsonl"
    data.write_text(_jsonl(ragbench_rows(2)), encoding="utf-8")
    if kind == "existing file":
        out = tmp_path / "taken"
        out.write_text("keep me", encoding="utf-8")
    elif kind == "under a file":
        (tmp_path / "a-file").write_text("", encoding="utf-8")
        out = tmp_path / "a-file" / "run"
    else:
        if os.geteuid() == 0:
            pytest.skip("root writes into read-only directories")
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        out = locked / "run"
    code = run_cli(["judge", "ragbench", str(data), "--out", str(out), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith("error: ") and "Traceback" not in err and str(out) in err
    if kind == "existing file":
        assert out.read_text(encoding="utf-8") == "keep me"
    # The gate's --out too: a directory where the report file should go.
    gate_out = tmp_path / "report-dir"
    gate_out.mkdir()
    code = run_cli(["gate", str(GATE_GOLD), str(GATE_TRACES), "--out", str(gate_out)])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: ") and str(gate_out) in err, err


def test_debug_shows_the_traceback(tmp_path: Path, capsys) -> None:
    data = tmp_path / "data.jsonl"
    data.write_bytes(b'{"id": "caf\xe9"}\n')
    assert run_cli(["--debug", "judge", "ragbench", str(data), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err and err.rstrip().splitlines()[-1].startswith("error: ")


def _alias_bomb(levels: int = 7) -> str:
    """A "billion laughs" YAML body: ``9 ** levels`` strings once expanded (4.8 million at 7).

    Each anchor is defined under a key of its own, so the document is a mapping like any
    config; the last alias sits under ``model`` (a judge config's field, a task's instructions).
    """
    lines = [f"l0: &l0 [{', '.join(['lol'] * 9)}]"]
    lines += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


def _hostile_yaml(kind: str) -> str:
    if kind == "aliases":
        return _alias_bomb() + "model: *l6\ninstructions: *l6\n"
    return "model: " + "[" * 20_000 + "]" * 20_000 + "\n"  # deeper than Python's recursion


def _hostile_args(where: str, bomb: Path, folder: Path) -> list[str]:
    """A command line that reads ``bomb`` as the YAML file ``where`` names."""
    pairs = folder / "pairs.jsonl"
    pairs.write_text(_jsonl(_pairs(2)), encoding="utf-8")
    out = str(folder / "out")
    if where == "judge config":
        return ["judge", "pairwise", str(pairs), "--config", str(bomb), "--out", out, "--no-progress"]
    if where == "task file":
        data = folder / "claims.jsonl"
        data.write_text(_jsonl([{"id": "c1", "response": "x", "question": "q"}]), encoding="utf-8")
        return ["judge", str(bomb), str(data), "--out", out, "--no-progress"]
    if where in ("jury file", "juror config", "cascade file"):
        if where == "juror config":
            body = "jury:\n  jurors:\n    - {name: a, config: %s}\n    - {name: b, config: baseline}\n"
            config = folder / "panel.yaml"
            config.write_text(body % bomb.name, encoding="utf-8")
        else:
            key = "jury" if where == "jury file" else "cascade"
            config = bomb
            config.write_text(bomb.read_text(encoding="utf-8") + f"{key}: {{}}\n", encoding="utf-8")
        return ["judge", "pairwise", str(pairs), "--config", str(config), "--out", out, "--no-progress"]
    if where == "calibrate config":
        return ["calibrate", "pairwise", "--gold", str(pairs), "--config", str(bomb), "--out", out]
    if where == "gate thresholds":
        return ["gate", str(GATE_GOLD), str(GATE_TRACES), "--thresholds", str(bomb)]
    if where == "probe set":
        return ["probe", "injection", "pairwise", str(pairs), "--cases", str(bomb)]
    raise AssertionError(where)


HOSTILE_WHERE = [
    "judge config",
    "task file",
    "jury file",
    "juror config",
    "cascade file",
    "calibrate config",
    "gate thresholds",
    "probe set",
]


@pytest.mark.parametrize("kind", ["aliases", "nesting"])
@pytest.mark.parametrize("where", HOSTILE_WHERE)
def test_hostile_yaml_is_refused_in_one_short_line(
    where: str, kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Before: an alias bomb's value was expanded and echoed (a line of millions of characters,
    # gigabytes at 9 levels) and deep nesting hit Python's recursion limit (exit 70).
    bomb = tmp_path / "hostile.yaml"
    bomb.write_text(_hostile_yaml(kind), encoding="utf-8")

    code = run_cli(_hostile_args(where, bomb, tmp_path))

    err = capsys.readouterr().err
    assert code == 2, err[:2000]
    assert len(err) < 1000, err[:2000]
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "hostile.yaml" in err and "Traceback" not in err
    assert ("expand to more than" if kind == "aliases" else "nested deeper than 100") in err


def test_long_value_in_a_judge_config_is_quoted_short(tmp_path: Path, capsys) -> None:
    config = tmp_path / "judge.yaml"
    config.write_text("model: openai/m\ntemperature: '" + "7" * 500_000 + "x'\n", encoding="utf-8")
    data = tmp_path / "pairs.jsonl"
    data.write_text(_jsonl(_pairs(2)), encoding="utf-8")
    code = run_cli(["judge", "pairwise", str(data), "--config", str(config), "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert code == 2, err[:2000]
    line = err.strip()
    assert "temperature" in line and "line 2" in line
    assert len(line) <= len(str(config)) + QUOTED, line[:2000]


def test_key_given_twice_in_a_json_list_names_the_record(tmp_path: Path, capsys) -> None:
    rows = _pairs(3)
    text = json.dumps(rows, indent=1)
    text = text.replace('"id": "p2",', '"id": "p2", "label": "1",', 1)
    data = tmp_path / "pairs.json"
    data.write_text(text, encoding="utf-8")
    code = run_cli(["judge", "pairwise", str(data), "--out", str(tmp_path / "o"), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "pairs.json, line 3: the key 'label' is given twice" in err


def _write_parquet(path: Path, rows: list[dict], binary: tuple[str, ...]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    columns = {}
    for name in rows[0]:
        values = [row[name] for row in rows]
        if name in binary:
            columns[name] = pa.array([v if isinstance(v, bytes) else v.encode() for v in values], pa.binary())
        else:
            columns[name] = pa.array(values)
    pq.write_table(pa.table(columns), path)


def test_parquet_binary_ids_are_read_as_text(tmp_path: Path, capsys) -> None:
    # A Parquet writer that stores strings as BINARY: before, the ids became "b'p0'".
    data = tmp_path / "pairs.parquet"
    _write_parquet(data, _pairs(2), binary=("id", "question"))
    out = tmp_path / "out"
    assert run_cli(["judge", "pairwise", str(data), "--out", str(out), "--no-progress"]) == 0
    capsys.readouterr()
    ids = {
        json.loads(line)["id"] for line in (out / "results.jsonl").read_text(encoding="utf-8").splitlines()
    }
    assert ids and all(not item.startswith("b'") for item in ids), ids
    assert any(item.startswith("p0") for item in ids) and any(item.startswith("p1") for item in ids), ids


def test_parquet_binary_cell_that_is_not_utf8_is_one_line(tmp_path: Path, capsys) -> None:
    rows = _pairs(2)
    rows[1]["id"] = b"\xffp1"
    data = tmp_path / "pairs.parquet"
    _write_parquet(data, rows, binary=("id",))
    code = run_cli(["judge", "pairwise", str(data), "--out", str(tmp_path / "o"), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "pairs.parquet, line 2, field 'id': a binary cell that is not UTF-8" in err
