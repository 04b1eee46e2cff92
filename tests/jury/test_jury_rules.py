"""The rules of juries that need no server: the jury file, the vote, the weights, which tasks
can have a jury, the repeat salt, and the agreement statistics against published values."""

from __future__ import annotations

import math
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from jury_simulation import BOOL_TASK, PAIR_TASK, task_file, write_claims

from jurist import verbs
from jurist.errors import ConfigError
from jurist.judges.cache_context import repeat_salt
from jurist.judges.config import JudgeConfig
from jurist.judges.lm import build_lm, cache_salt
from jurist.jury import is_jury_file, load_jury
from jurist.jury.aggregate import Vote, decide
from jurist.jury.ballots import unit_outcomes
from jurist.jury.calibrate import jury_spec, log_odds_weight, write_weights
from jurist.jury.panel import jury_panel
from jurist.jury.run import check_task
from jurist.metrics import annotators
from jurist.metrics.gold_agreement import bootstrap_ci
from jurist.report.review import Review
from jurist.schemas import ItemResult
from jurist.tasks import get_task
from jurist.tasks._unit_verdicts import UnitVerdicts
from jurist.verbs import judge_specs
from support import run_cli


def write(path: Path, text: str) -> Path:
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


TWO_INLINE = "jury:\n  jurors:\n    - {name: a, model: openai/a}\n    - {name: b, model: openai/b}\n"
"""A jury of two inline jurors (never asked: the tests below need no server)."""


def juror_file(folder: Path, name: str, model: str) -> Path:
    return write(
        folder / f"{name}.yaml", f"model: {model}\napi_base: http://127.0.0.1:9/v1\ntemperature: 0.2\n"
    )


def test_a_jury_file_reads_juror_files_relative_to_itself_and_inline_jurors(tmp_path):
    folder = tmp_path / "judges"
    folder.mkdir()
    juror_file(folder, "small-a", "openai/a")
    jury = write(
        folder / "panel.yaml",
        """\
        jury:
          aggregate: plurality
          weights: {small-a: 1.5, small-b: 0.5}
          jurors:
            - {name: small-a, config: small-a.yaml, temperature: 0.0}
            - {name: small-b, model: openai/b, api_base: "http://127.0.0.1:8/v1", api_key_env: B_KEY}
        """,
    )
    assert is_jury_file(jury) and not is_jury_file(folder / "small-a.yaml") and not is_jury_file(None)
    found = load_jury(jury, overrides={"concurrency": 3})
    assert found.name == "panel" and found.aggregate == "plurality"
    first, second = found.jurors
    assert (first.config.model, first.config.temperature, first.config.concurrency) == ("openai/a", 0.0, 3)
    assert first.config.source == folder / "small-a.yaml"
    assert (second.config.api_key_env, second.config.concurrency, second.config.source) == ("B_KEY", 3, jury)
    assert found.weight("small-a") == 1.5
    # Concurrency does not change answers; a temperature does, and so the jury's fingerprint.
    assert found.fingerprint() == load_jury(jury).fingerprint()
    assert found.fingerprint() != load_jury(jury, overrides={"temperature": 0.5}).fingerprint()


@pytest.mark.parametrize(
    ("body", "message", "field", "line"),
    [
        ("jury:\n  jurors:\n    - {name: a, model: openai/a}\n", "at least two jurors", "jury.jurors", 2),
        (
            "jury:\n  jurors:\n    - {name: a, model: openai/a}\n    - {name: b, modle: openai/b}\n",
            "unknown field",
            "jury.jurors[1].modle",
            4,
        ),
        (
            "jury:\n  jurors:\n    - {name: a, model: openai/a}\n    - {name: a, model: openai/b}\n",
            "two jurors are named 'a'",
            "jury.jurors[1].name",
            4,
        ),
        (
            "jury:\n  jurors:\n    - {name: a, config: missing.yaml}\n    - {name: b, model: openai/b}\n",
            "not found",
            "jury.jurors[0].config",
            3,
        ),
        (
            "jury:\n  aggregate: vote\n  jurors: []\n",
            "aggregate must be one of majority, plurality, mean, median",
            "jury.aggregate",
            2,
        ),
        (
            "jury:\n  weights: {a: 1, c: 2}\n  jurors:\n    - {name: a, model: openai/a}\n"
            "    - {name: b, model: openai/b}\n",
            "which is no juror",
            "jury.weights",
            2,
        ),
        (
            "jury:\n  weights: {a: -1, b: 2}\n  jurors:\n    - {name: a, model: openai/a}\n"
            "    - {name: b, model: openai/b}\n",
            "must be a number >= 0",
            "jury.weights.a",
            2,
        ),
        (
            "jury:\n  jurors:\n    - {name: a/b, model: openai/a}\n    - {name: b, model: openai/b}\n",
            "each juror needs a name",
            "jury.jurors[0].name",
            3,
        ),
    ],
)
def test_a_bad_jury_file_is_named_with_its_line_and_field(tmp_path, body, message, field, line):
    path = write(tmp_path / "jury.yaml", body)
    with pytest.raises(ConfigError, match=message) as caught:
        load_jury(path)
    assert (caught.value.path, caught.value.field, caught.value.line) == (str(path), field, line)


def test_votes_break_ties_by_member_order_and_weights_count():
    assert decide([Vote("a", True), Vote("b", False)], "majority") == decide(
        [Vote("a", True), Vote("b", False)], "plurality"
    )
    tie = decide([Vote("a", False), Vote("b", True)], "majority")
    assert (tie.verdict, tie.source, tie.tie) == (False, "a", True)
    weighted = decide([Vote("a", "x", 1.0), Vote("b", "y", 0.4), Vote("c", "y", 0.4)], "majority")
    assert (weighted.verdict, weighted.tie) == ("x", False)
    # A bool and a number are different verdicts even though True == 1 in Python.
    assert decide([Vote("a", 1), Vote("b", True), Vote("c", True)], "plurality").verdict is True
    assert (
        decide(
            [Vote("a", 1), Vote("b", 5), Vote("c", 5)],
            "median",
        ).verdict
        == 5.0
    )
    assert decide([Vote("a", 1, 3.0), Vote("b", 5, 1.0)], "mean").verdict == 2.0
    with pytest.raises(ValueError, match="needs numeric verdicts"):
        decide([Vote("a", "yes")], "mean")


def test_weights_are_the_clipped_log_odds_of_accuracy_written_into_a_copy(tmp_path):
    import pandas as pd

    for name in ("a", "b"):
        juror_file(tmp_path, name, f"openai/{name}")
    jury = write(
        tmp_path / "duo.yaml",
        "jury:\n  jurors:\n    - {name: a, config: a.yaml}\n    - {name: b, config: b.yaml}\n",
    )
    spec = jury_spec(jury)
    board = pd.DataFrame(
        [
            {"judge": "duo/a", "accuracy": 0.9, "items": 10},
            {"judge": "duo/a", "accuracy": 0.7, "items": 30},
            {"judge": "duo/b", "accuracy": 0.45, "items": 40},
        ]
    )
    target = tmp_path / "out" / "duo.weighted.yaml"
    weights = write_weights(spec, board, target)
    assert weights == {"a": pytest.approx(math.log(0.75 / 0.25)), "b": 0.0}
    copy = yaml.safe_load(target.read_text())["jury"]
    assert copy["weights"] == {"a": round(math.log(3), 4), "b": 0.0}
    assert copy["jurors"][0]["config"] == "../a.yaml"
    assert [j.config.model for j in load_jury(target).jurors] == ["openai/a", "openai/b"]
    assert log_odds_weight(1.0) == pytest.approx(math.log(99))
    with pytest.raises(ConfigError, match="no juror agrees with gold"):
        write_weights(spec, board.assign(accuracy=0.3), target)


def test_judge_specs_turn_a_jury_file_into_one_calibration_judge(tmp_path):
    for name in ("a", "b"):
        juror_file(tmp_path, name, f"openai/{name}")
    jury = write(
        tmp_path / "duo.yaml",
        "jury:\n  jurors:\n    - {name: a, config: a.yaml}\n    - {name: b, config: b.yaml}\n",
    )
    specs = judge_specs([jury, tmp_path / "a.yaml"])
    assert [spec.name for spec in specs] == ["duo", "a"]
    assert specs[0].config.model.startswith("jury/") and type(specs[0]).__name__ == "JurySpec"


def test_a_task_whose_verdict_is_neither_an_output_field_nor_derived_cannot_have_a_jury(
    tmp_path, monkeypatch
):
    # The built-in pairwise task derives its verdict per pair (after the swap rule), so it can.
    builtin = get_task("pairwise")
    duo = jury_panel(load_jury(write(tmp_path / "two.yaml", TWO_INLINE)))
    assert builtin.panel_verdicts(builtin.options()) is not None
    assert check_task(builtin, builtin.options(), duo) == "verdict"
    # The YAML pairwise task derives its verdict per row (both orders) too.
    pairs = get_task(str(task_file(tmp_path, PAIR_TASK, "pairs")))
    assert check_task(pairs, pairs.options(), duo) == "winner"
    # A verdict that is a column computed over outputs, with no rule to derive it: refused.
    claims = task_file(tmp_path, BOOL_TASK, "claims")
    computed = get_task(str(claims))
    monkeypatch.setattr(computed, "review", lambda options: Review(verdict="verdict_and_reason"))
    for name in ("a", "b"):
        juror_file(tmp_path, name, f"openai/{name}")
    jury = write(
        tmp_path / "duo.yaml",
        "jury:\n  jurors:\n    - {name: a, config: a.yaml}\n    - {name: b, config: b.yaml}\n",
    )
    with pytest.raises(
        ConfigError, match="task 'claim-checker' cannot have a jury: its verdict 'verdict_and_reason'"
    ):
        verbs.judge(computed, write_claims(tmp_path, 2), jury, out=tmp_path / "run", progress=False)
    mean = write(tmp_path / "mean.yaml", jury.read_text().replace("jury:\n", "jury:\n  aggregate: mean\n"))
    with pytest.raises(ConfigError, match="'mean' needs numeric verdicts"):
        verbs.judge(
            task_file(tmp_path, BOOL_TASK, "claims"), write_claims(tmp_path, 2), mean, out=tmp_path / "r2"
        )
    assert not (tmp_path / "run").exists() and not (tmp_path / "r2").exists()


class _FirstValue(UnitVerdicts):
    """A unit's verdict is its first item's ``v``; a tied vote gives ``none``, which no output says."""

    unit_name = "group"
    no_decision = "none"

    def units(self, dataset: Any) -> dict[str, tuple[str, ...]]:
        return {"g": ("g|1", "g|2")}

    def verdict(self, outputs: Sequence[Mapping[str, Any] | None]) -> Any:
        return outputs[0]["v"] if outputs[0] and outputs[1] else None


def test_a_unit_vote_the_answers_cannot_express_is_a_failed_unit(tmp_path):
    panel = jury_panel(load_jury(write(tmp_path / "two.yaml", TWO_INLINE)))
    names = [member.name for member in panel.members]

    def said(value: str) -> dict[str, ItemResult]:
        return {item: ItemResult(id=item, status="ok", output={"v": value}) for item in ("g|1", "g|2")}

    agreed, ballot = unit_outcomes("g", ("g|1", "g|2"), panel, _FirstValue(), {n: said("x") for n in names})
    assert [o.output["v"] for o in agreed if o.output] == ["x", "x"] and not ballot.tie
    assert agreed[0].output is not None and agreed[0].output["jury"]["unit"] == "g"
    tied, ballot = unit_outcomes(
        "g", ("g|1", "g|2"), panel, _FirstValue(), {names[0]: said("x"), names[1]: said("y")}
    )
    assert ballot.tie and ballot.votes == {names[0]: "x", names[1]: "y"}
    assert all(o.output is None and "cannot give 'none'" in str(o.error) for o in tied)
    missing, ballot = unit_outcomes("g", ("g|1", "g|2"), panel, _FirstValue(), {n: {} for n in names})
    assert all(o.error and o.error.startswith("every juror failed") for o in missing)


def test_repeat_1_keeps_the_cache_key_and_later_repeats_get_their_own(tmp_path):
    config = JudgeConfig(model="openai/x", api_base="http://127.0.0.1:9/v1", cache_dir=tmp_path / "cache")
    plain = build_lm(config).kwargs.get("rollout_id")
    with repeat_salt(1):
        first = build_lm(config).kwargs.get("rollout_id")
    with repeat_salt(2):
        second = build_lm(config).kwargs.get("rollout_id")
    with repeat_salt(3):
        third = build_lm(config).kwargs.get("rollout_id")
    assert plain == first == cache_salt(config)
    assert len({first, second, third}) == 3
    other = JudgeConfig(model="openai/x", api_base="http://127.0.0.1:8/v1", cache_dir=tmp_path / "cache")
    assert second != cache_salt(other) and second - first < 3 * (1000 << 48)


# ---------------------------------------------------------------------- agreement statistics

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", the example with missing
# values: 4 observers, 12 units; alpha is 0.743 nominal and 0.849 interval.
_N = None
KRIPPENDORFF_2011 = [
    list(unit)
    for unit in zip(
        [1, 2, 3, 3, 2, 1, 4, 1, 2, _N, _N, _N],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, _N, 3],
        [_N, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, _N],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, _N],
        strict=True,
    )
]


def test_krippendorff_alpha_matches_the_published_example():
    assert annotators.krippendorff_alpha_nominal(KRIPPENDORFF_2011) == pytest.approx(0.743, abs=5e-4)
    assert annotators.krippendorff_alpha_interval(KRIPPENDORFF_2011) == pytest.approx(0.849, abs=5e-4)
    cells = annotators.interval_cells(KRIPPENDORFF_2011)
    assert len(cells) == 11  # unit 12 has one value: not pairable
    assert float(annotators.krippendorff_alpha_interval_from_cells(cells.sum(axis=0))) == pytest.approx(
        annotators.krippendorff_alpha_interval(KRIPPENDORFF_2011)
    )


def test_cell_statistics_equal_the_direct_ones_and_resample_items():
    rng = np.random.default_rng(3)
    ratings = [[str(v) if v < 3 else None for v in rng.integers(0, 4, size=4)] for _ in range(80)]
    cells = annotators.nominal_cells(ratings)
    total = cells.sum(axis=0)
    assert float(annotators.fleiss_kappa_from_cells(total)) == pytest.approx(annotators.fleiss_kappa(ratings))
    assert float(annotators.pairwise_agreement_from_cells(total)) == pytest.approx(
        annotators.pairwise_agreement(ratings)
    )
    assert float(annotators.krippendorff_alpha_nominal_from_cells(total)) == pytest.approx(
        annotators.krippendorff_alpha_nominal(ratings)
    )
    low, high = bootstrap_ci(cells, annotators.fleiss_kappa_from_cells, n_resamples=500, seed=1)
    assert low < annotators.fleiss_kappa(ratings) < high
    # Every vote the same label: no expected disagreement, so no κ or α.
    same = annotators.nominal_cells([["x", "x"], ["x", "x", "x"]]).sum(axis=0)
    assert math.isnan(float(annotators.fleiss_kappa_from_cells(same)))
    assert math.isnan(float(annotators.krippendorff_alpha_nominal_from_cells(same)))
    assert math.isnan(annotators.krippendorff_alpha_interval([[2, 2], [2, 2]]))
    assert annotators.mean_item_sd([[1.0, 3.0], [4.0, 4.0, 4.0]]) == pytest.approx(math.sqrt(2) / 2)


def test_the_command_line_names_a_bad_jury_file_in_one_line(tmp_path, capsys):
    task = task_file(tmp_path, BOOL_TASK, "claims")
    data = write_claims(tmp_path, 2)
    jury = write(tmp_path / "jury.yaml", "jury:\n  jurors:\n    - {name: a, model: openai/a}\n")
    code = run_cli(["judge", str(task), str(data), "--config", str(jury), "--out", str(tmp_path / "run")])
    error = capsys.readouterr().err.strip()
    assert code == 2 and error.count("\n") == 0
    assert f"{jury}, line 2, field 'jury.jurors': 'jurors' must list at least two jurors" in error
