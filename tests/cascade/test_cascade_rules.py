"""The rules of cascades that need no server: the cascade file and its errors, which tasks and
stages can be, the run directory a cascade claims, and the threshold grid of a three-stage
cascade against a brute force written here."""

from __future__ import annotations

import itertools
import textwrap
from pathlib import Path

import pandas as pd
import pytest
from cascade_simulation import LABEL_TASK, claim_rows, rule_fires, write_claims, write_task

from jurist import verbs
from jurist.errors import ConfigError, RunDirectoryError
from jurist.judges.config import JudgeConfig
from jurist.jury import CascadeSpec, Stage, is_cascade_file, is_jury_file, load_cascade
from jurist.jury.cascade_calibrate import choose
from jurist.jury.cascade_config import Cascade
from jurist.jury.cascade_paths import StageRecord, certainty
from jurist.report.review import Review
from jurist.runner import iter_run_results
from jurist.schemas import ItemResult, Usage
from jurist.testing.openai_server import closed_port_url
from jurist.verbs import judge_specs
from support import run_cli


def write(path: Path, text: str) -> Path:
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def test_a_cascade_file_reads_its_stages_relative_to_itself(tmp_path):
    folder = tmp_path / "judges"
    folder.mkdir()
    write(folder / "small.yaml", "model: openai/small\napi_base: http://127.0.0.1:9/v1\n")
    write(
        folder / "panel.yaml",
        """\
        jury:
          jurors:
            - {name: a, model: openai/a, api_base: "http://127.0.0.1:9/v1"}
            - {name: b, model: openai/b, api_base: "http://127.0.0.1:9/v1"}
        """,
    )
    cascade = write(
        folder / "tiers.yaml",
        """\
        cascade:
          stages:
            - {name: rules, config: baseline}
            - {name: small, config: small.yaml, escalate_below: 0.8, temperature: 0.3}
            - {name: panel, jury: panel.yaml}
            - {name: large, model: openai/large, api_base: "http://127.0.0.1:9/v1"}
          target_agreement: 0.9
        """,
    )
    assert (
        is_cascade_file(cascade) and not is_jury_file(cascade) and not is_cascade_file(folder / "panel.yaml")
    )
    found = load_cascade(cascade, overrides={"concurrency": 3})
    assert found.name == "tiers" and found.target_agreement == 0.9
    rules, small, panel, last = found.stages
    assert [s.kind for s in found.stages] == ["baseline", "model", "jury", "model"]
    assert (small.judge_config.model, small.judge_config.temperature, small.escalate_below) == (
        "openai/small",
        0.3,
        0.8,
    )
    assert small.judge_config.concurrency == 3 and rules.judge_config.is_baseline
    assert panel.jury is not None and [j.config.concurrency for j in panel.jury.jurors] == [3, 3]
    assert last.escalate_below is None and last.judge_config.model == "openai/large"
    # Another threshold is another cascade; the calibration judge stands for the whole cascade.
    assert found.with_thresholds({"small": 0.7}).fingerprint() != found.fingerprint()
    (spec,) = judge_specs([cascade])
    assert isinstance(spec, CascadeSpec) and spec.name == "tiers"


def stages(*entries: str, extra: str = "") -> str:
    """A cascade file's text with one stage per entry (inline YAML mappings)."""
    return "cascade:\n  stages:\n" + "".join(f"    - {{{entry}}}\n" for entry in entries) + extra


LAST = "name: b, model: openai/b"
BAD = [
    (stages("name: a, config: baseline"), "cascade.stages", "at least two stages"),
    (
        stages("name: a, config: baseline", f"{LAST}, escalate_below: 0.5"),
        "cascade.stages[1].escalate_below",
        "the last stage answers every item",
    ),
    (stages("name: a, modle: openai/a", LAST), "cascade.stages[0].modle", ""),
    (
        stages("name: a, model: openai/a, escalate_below: 1.5", LAST),
        "cascade.stages[0].escalate_below",
        "number in [0, 1]",
    ),
    (stages("name: a, config: baseline", "name: a, model: openai/b"), "cascade.stages[1].name", "named 'a'"),
    (stages("name: a, config: missing.yaml", LAST), "cascade.stages[0].config", "not found"),
    (
        stages("name: a, jury: panel.yaml, escalate_below: 0.5", LAST),
        "cascade.stages[0].escalate_below",
        "jurors disagree on",
    ),
    (stages("name: a", LAST), "cascade.stages[0]", "give the stage a judge"),
    (stages(extra="  target_agreement: 0\n"), "cascade.target_agreement", "(0, 1]"),
    (stages(extra="  thresholds: 1\n"), "cascade.thresholds", "unknown key"),
]


@pytest.mark.parametrize(("text", "field", "message"), BAD)
def test_a_bad_cascade_file_is_refused_naming_its_line_and_field(tmp_path, text, field, message):
    write(
        tmp_path / "panel.yaml",
        "jury:\n  jurors:\n    - {name: a, model: openai/a}\n    - {name: b, model: openai/b}\n",
    )
    path = write(tmp_path / "bad.yaml", text)
    with pytest.raises(ConfigError) as caught:
        load_cascade(path)
    error = caught.value
    assert error.path == str(path) and error.field == field and message in error.reason
    assert error.line is not None and f"line {error.line}" in str(error)


def test_judging_refuses_a_cascade_the_task_cannot_run_before_any_call(tmp_path):
    url = closed_port_url()  # any call would stop the run with a connection error instead
    task, data = write_task(tmp_path), write_claims(tmp_path, 4)
    cascade = write(
        tmp_path / "open.yaml",
        f"""\
        cascade:
          stages:
            - {{name: small, model: openai/small, api_base: "{url}"}}
            - {{name: large, model: openai/large, api_base: "{url}"}}
        """,
    )
    with pytest.raises(ConfigError) as caught:
        verbs.judge(task, data, cascade, out=tmp_path / "run", progress=False)
    assert caught.value.field == "cascade.stages[0].escalate_below" and caught.value.line == 3
    assert "let `jurist calibrate" in caught.value.reason
    assert not (tmp_path / "run").exists()

    # A label task states no confidence, and its judge asks for no log-probabilities: a model
    # stage before the last cannot send items on.
    labels = write_task(tmp_path, LABEL_TASK, "topics")
    sure = write(
        tmp_path / "sure.yaml",
        cascade.read_text().replace("openai/small,", "openai/small, escalate_below: 0.8,"),
    )
    with pytest.raises(ConfigError, match="states none and .* asks for no log-probabilities"):
        verbs.judge(labels, data, sure, out=tmp_path / "run", progress=False)
    with pytest.raises(ConfigError, match="not repeated"):
        verbs.judge(task, data, sure, out=tmp_path / "run", progress=False, repeats=2)
    # Calibration needs the agreement to reach, and asks nothing without it.
    with pytest.raises(ConfigError, match="--target-agreement"):
        verbs.calibrate(task, [data], [sure], out=tmp_path / "calibration", write=False)


def test_an_offline_cascade_claims_its_run_directory(tmp_path, capsys):
    task, data = write_task(tmp_path), write_claims(tmp_path, 10, rules=True)
    plain = tmp_path / "plain"
    assert run_cli(["judge", str(task), str(data), "--out", str(plain), "--no-progress"]) == 0
    cascade = write(
        tmp_path / "rules.yaml",
        """\
        cascade:
          stages:
            - {name: rules, config: baseline}
            - {name: again, model: baseline, concurrency: 2}
        """,
    )
    with pytest.raises(RunDirectoryError, match="holds another run"):
        verbs.judge(task, data, cascade, out=plain, progress=False)
    run = verbs.judge(task, data, cascade, out=tmp_path / "run", progress=False)
    no_rule = {row["id"] for row in claim_rows(10, rules=True) if not rule_fires(row["claim"])}
    assert {r.id for r in iter_run_results(tmp_path / "run" / "stages" / "again")} == no_rule
    assert run.summary["cascade"]["cost"]["total"] == 0.0
    # The rule judge's own run is unchanged apart from the rule it records: same verdicts.
    assert list(run.sort_values("id")["verdict"]) == list(
        pd.read_parquet(plain / "items.parquet").sort_values("id")["verdict"]
    )


def _record(verdicts: dict[str, tuple[bool, float, bool, float]]) -> StageRecord:
    """A stage's record from ``id -> (verdict, probability of yes, agrees with gold, cost)``."""
    results = {
        item_id: ItemResult(
            id=item_id, status="ok", output={"verdict": v}, usage=Usage(calls=1, prompt_tokens=9, cost=cost)
        )
        for item_id, (v, _, _, cost) in verdicts.items()
    }
    rows = {
        item_id: {"id": item_id, "verdict": v, "confidence": p, "correct": agrees}
        for item_id, (v, p, agrees, _) in verdicts.items()
    }
    return StageRecord(Path("."), results, rows)


def test_a_three_stage_grid_finds_the_cheapest_thresholds_that_reach_the_target():
    review = Review(verdict="verdict", gold="gold", agrees="correct", confidence="confidence")
    stages = tuple(
        Stage(name, "model", config=JudgeConfig(model=f"openai/{name}")) for name in ("a", "b", "c")
    )
    cascade = Cascade("grid", stages)
    # Stage a is cheap and right when sure; b costs more and is right on most of a's doubts; c is right.
    ids = [f"i{n}" for n in range(12)]
    a = {i: (True, [0.9, 0.6, 0.3][n % 3], n % 3 == 0 or n % 6 == 1, 0.001) for n, i in enumerate(ids)}
    b = {i: (True, [0.95, 0.7][n % 2], n % 2 == 0 or n == 3, 0.01) for n, i in enumerate(ids)}
    c = {i: (True, 0.99, True, 0.1) for i in ids}
    records = {"a": _record(a), "b": _record(b), "c": _record(c)}
    choice = choose(cascade, [(ids, records)], review, target=0.9)

    def evaluate(ta: float, tb: float) -> tuple[float, float]:
        agreed, cost = 0, 0.0
        for i in ids:
            cost += a[i][3]
            if certainty(True, a[i][1]) >= ta:
                agreed += a[i][2]
                continue
            cost += b[i][3]
            if certainty(True, b[i][1]) >= tb:
                agreed += b[i][2]
                continue
            cost += c[i][3]
            agreed += c[i][2]
        return agreed / len(ids), cost

    grid_a = sorted({0.0, 1.0, 0.9, 0.6, 0.3})
    grid_b = sorted({0.0, 1.0, 0.95, 0.7})
    ranked = []
    for ta, tb in itertools.product(grid_a, grid_b):
        agreement, cost = evaluate(ta, tb)
        ranked.append((agreement < 0.9 - 1e-12, round(cost, 12), -agreement, (ta, tb)))
    best = min(ranked)
    assert choice.thresholds == {"a": best[3][0], "b": best[3][1]}
    assert choice.met and choice.combinations == len(grid_a) * len(grid_b)
    assert choice.cost == pytest.approx(best[1]) and choice.agreement == -best[2]
    assert choice.alone["c"] == {"agreement": 1.0, "cost": pytest.approx(0.1 * len(ids))}
