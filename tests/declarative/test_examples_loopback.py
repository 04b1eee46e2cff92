"""The four example task files end to end against the loopback OpenAI-compatible server.

For each example in ``examples/`` the loopback "model" recognises the row it is asked
about (by the exact text of one input field in the prompt) and answers a verdict chosen
here for that row. The whole pipeline runs: judge → score → calibrate → optimize
(bootstrap) → judge again with the compiled program. Every figure is checked against a
value computed in this file, by explicit formulas, from the chosen answers and the gold
column of the data file (read here with ``json``/``csv``, not with jurist).
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

import jurist
import jurist.verbs
from jurist.testing import OpenAICompatibleServer
from support import loopback_config, prompt_sections, run_cli, write_jsonl

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
MAX_DEMOS = 4  # jurist's OptimizerSettings().max_demos: bootstrap keeps the first 4 right traces


# ---------------------------------------------------------------------- the data, read by hand


def norm(text: str) -> str:
    """Text with its whitespace collapsed, to match a prompt section against a data cell."""
    return " ".join(str(text).split())


def read_records(path: Path) -> list[dict[str, Any]]:
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    if path.suffix == ".json":
        return json.loads(path.read_text(encoding="utf-8"))
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def gold_of(kind: str, value: Any) -> Any:
    """The gold cell as a verdict: pairwise labels 1/2 are A/B (which response is better)."""
    if kind == "pairwise":
        return {1: "A", 2: "B", 0: "tie"}[int(value)]
    if kind == "score":
        return int(value)
    return value


# ---------------------------------------------------------------------- the chosen answers

MT_OFFSETS = (0, 1, 0, -2, 0, 3, -1, 0)  # added to the gold score, cyclically, then kept in 1..10
CF_FLIPPED = {3, 6, 11}  # row positions whose bool verdict is the opposite of gold
HERITAGE_WRONG = {2: "L", 9: "A", 13: "M", 15: "U"}  # row position -> the wrong label answered


def pair_behaviour(position: int) -> str:
    """``right``: names the better response in both orders; ``wrong``: the worse one in both;
    ``first``: always answers A (the first position), whatever the order."""
    if position % 5 == 2:
        return "first"
    if position % 7 == 3:
        return "wrong"
    return "right"


def chosen(name: str, position: int, gold: Any) -> Any:
    """What the loopback answers for the row at ``position`` (0-based) with gold ``gold``."""
    if name == "mt-bench-grader":
        return min(10, max(1, gold + MT_OFFSETS[position % len(MT_OFFSETS)]))
    if name == "context-faithfulness":
        verdict = (not gold) if position in CF_FLIPPED else gold
        confidence = 0.95 - 0.05 * (position % 4) if verdict else 0.1 + 0.05 * (position % 3)
        return verdict, round(confidence, 2)
    if name == "heritage-custodian-type":
        return HERITAGE_WRONG.get(position, gold)
    return pair_behaviour(position)


def positional_answer(behaviour: str, gold: str, order: str) -> str:
    """The position (A = first shown) answered for a pair in ``order`` (``AB`` as given)."""
    if behaviour == "first":
        return "A"
    better = gold if behaviour == "right" else {"A": "B", "B": "A"}[gold]
    return better if order == "AB" else {"A": "B", "B": "A"}[better]


@dataclass(frozen=True)
class Case:
    kind: str
    data: str
    key_field: str  # the prompt section that identifies a row ...
    key_column: str  # ... and the data column it comes from
    labels: tuple[str, ...] = ()

    def rows(self, name: str) -> list[dict[str, Any]]:
        return read_records(EXAMPLES / name / self.data)


CASES = {
    "mt-bench-grader": Case("score", "answers.jsonl", "answer", "answer"),
    "context-faithfulness": Case("bool", "rows.jsonl", "response", "response", ("true", "false")),
    "llmbar-pairwise": Case("pairwise", "pairs.json", "response_a", "output_1", ("A", "B", "tie")),
    "heritage-custodian-type": Case(
        "label",
        "texts.csv",
        "text",
        "text",
        tuple("GLAMORCUBESFIXPHDNT"),
    ),
}
GOLD_COLUMN = {
    "mt-bench-grader": "human_score",
    "context-faithfulness": "adherence_score",
    "llmbar-pairwise": "label",
    "heritage-custodian-type": "custodian_type",
}


class Oracle:
    """The loopback's answers: finds the row from the prompt's text and answers its chosen verdict."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.case = CASES[name]
        self.answers: dict[Any, dict[str, str]] = {}
        self.misses: list[str] = []
        for position, record in enumerate(self.case.rows(name)):
            gold = gold_of(self.case.kind, record[GOLD_COLUMN[name]])
            answer = chosen(name, position, gold)
            if self.case.kind == "pairwise":
                first, second = norm(record["output_1"]), norm(record["output_2"])
                self.answers[(first, second)] = {"verdict": positional_answer(answer, gold, "AB")}
                self.answers[(second, first)] = {"verdict": positional_answer(answer, gold, "BA")}
            elif self.case.kind == "bool":
                verdict, confidence = answer
                self.answers[norm(record[self.case.key_column])] = {
                    "verdict": str(verdict),
                    "confidence": str(confidence),
                }
            else:
                self.answers[norm(record[self.case.key_column])] = {"verdict": str(answer)}
        rows = len(self.case.rows(name))
        assert len(self.answers) == rows * (2 if self.case.kind == "pairwise" else 1), "keys must be unique"

    def __call__(self, body: dict[str, Any]) -> str:
        sections = prompt_sections(body)
        if self.case.kind == "pairwise":
            key: Any = (norm(sections.get("response_a", "")), norm(sections.get("response_b", "")))
        else:
            key = norm(sections.get(self.case.key_field, ""))
        fields = self.answers.get(key)
        if fields is None:
            self.misses.append(str(key)[:80])
            fields = {"verdict": "no such row"}
        text = "[[ ## reasoning ## ]]\nChosen by the test for this row.\n\n"
        text += "\n\n".join(f"[[ ## {k} ## ]]\n{v}" for k, v in fields.items())
        return text + "\n\n[[ ## completed ## ]]"


# ---------------------------------------------------------------------- figures by hand


def hand_score(gold: list[int], said: list[int]) -> dict[str, float]:
    n = len(gold)
    errors = [abs(g - s) for g, s in zip(gold, said, strict=True)]
    # Quadratic-weighted kappa: 1 − Σ w·O / Σ w·E with w = (a − b)², O the observed pairs
    # (n of them) and E every gold value against every answered value (n², chance).
    observed = sum(e * e for e in errors) / n
    expected = sum((g - s) ** 2 for g in gold for s in said) / n**2
    return {
        "mae": sum(errors) / n,
        "exact_agreement": sum(e == 0 for e in errors) / n,
        "within_1": sum(e <= 1 for e in errors) / n,
        "qwk": 1 - observed / expected,
    }


def hand_kappa(gold: list[str], said: list[str], labels: tuple[str, ...]) -> tuple[float, float]:
    """(accuracy, Cohen's κ) with κ = (p_o − p_e) / (1 − p_e), p_e = Σ_k p_gold(k) · p_judge(k)."""
    n = len(gold)
    p_o = sum(g == s for g, s in zip(gold, said, strict=True)) / n
    p_e = sum((gold.count(k) / n) * (said.count(k) / n) for k in labels)
    return p_o, (p_o - p_e) / (1 - p_e)


def hand_auroc(gold: list[bool], confidence: list[float]) -> float:
    """P(confidence of a gold-true row > that of a gold-false row), ties counting one half."""
    positive = [c for g, c in zip(gold, confidence, strict=True) if g]
    negative = [c for g, c in zip(gold, confidence, strict=True) if not g]
    wins = sum((p > q) + 0.5 * (p == q) for p in positive for q in negative)
    return wins / (len(positive) * len(negative))


def expected_figures(name: str) -> dict[str, float]:
    """The figures of a run of the loopback on the example's data, by hand."""
    case = CASES[name]
    golds = [gold_of(case.kind, r[GOLD_COLUMN[name]]) for r in case.rows(name)]
    answers = [chosen(name, i, g) for i, g in enumerate(golds)]
    if case.kind == "score":
        figures = hand_score(golds, answers)
        return {**figures, "accuracy": figures["exact_agreement"], "kappa": figures["qwk"]}
    if case.kind == "bool":
        said = [verdict for verdict, _ in answers]
        text = {True: "true", False: "false"}
        accuracy, kappa = hand_kappa([text[g] for g in golds], [text[s] for s in said], case.labels)
        return {"accuracy": accuracy, "kappa": kappa, "auroc": hand_auroc(golds, [c for _, c in answers])}
    if case.kind == "label":
        accuracy, kappa = hand_kappa(golds, answers, case.labels)
        return {"accuracy": accuracy, "kappa": kappa}
    # Pairwise: a row's verdict is the winner both orders agree on, else tie.
    verdicts = [
        {"right": g, "wrong": {"A": "B", "B": "A"}[g], "first": "tie"}[b]
        for g, b in zip(golds, answers, strict=True)
    ]
    accuracy, kappa = hand_kappa(golds, verdicts, case.labels)
    n = len(golds)
    first_picks = sum(2 if b == "first" else 1 for b in answers)  # right/wrong: one A, one B
    return {
        "accuracy": accuracy,
        "kappa": kappa,
        "consistency": sum(b != "first" for b in answers) / n,
        "position_1_rate": first_picks / (2 * n),
    }


def example_scores(name: str, records: list[dict[str, Any]], start: int) -> list[tuple[float, Any]]:
    """Per optimization example of ``records`` (rows ``start``, ``start+2``, ... of the file, in
    order): its metric value (label/bool/pairwise: right or not; score: 1 − |error| / 9) and
    the text a demo made from it shows."""
    case = CASES[name]
    scored = []
    for offset, record in enumerate(records):
        position = start + 2 * offset
        gold = gold_of(case.kind, record[GOLD_COLUMN[name]])
        answer = chosen(name, position, gold)
        if case.kind == "pairwise":
            first, second = norm(record["output_1"]), norm(record["output_2"])
            for order, shown in (("AB", first), ("BA", second)):
                expected = gold if order == "AB" else {"A": "B", "B": "A"}[gold]
                scored.append((float(positional_answer(answer, gold, order) == expected), shown))
            continue
        key = norm(record[case.key_column])
        if case.kind == "score":
            scored.append((1 - abs(answer - gold) / 9, key))
        elif case.kind == "bool":
            scored.append((float(answer[0] == gold), key))
        else:
            scored.append((float(answer == gold), key))
    return scored


# ---------------------------------------------------------------------- the pipeline


def assert_figures(found: dict[str, Any], expected: dict[str, float], names: list[str]) -> None:
    for name in names:
        assert found[name] == pytest.approx(expected[name]), name


@pytest.mark.parametrize("name", sorted(CASES))
def test_example_task_end_to_end_on_loopback(name, tmp_path):
    case = CASES[name]
    task = jurist.get_task(str(EXAMPLES / name / "task.yaml"))
    assert task.spec.kind == case.kind
    data = EXAMPLES / name / case.data
    records = case.rows(name)
    n = len(records)
    yaml_demos = len(yaml.safe_load((EXAMPLES / name / "task.yaml").read_text()).get("examples") or [])
    oracle = Oracle(name)
    expected = expected_figures(name)
    judgments = n * (2 if case.kind == "pairwise" else 1)

    with OpenAICompatibleServer(oracle) as server:
        config = loopback_config(server.base_url, tmp_path / "cache").model_copy(update={"parse_retries": 1})

        # judge
        run = jurist.judge(task, data, config, out=tmp_path / "run", progress=False)
        assert (run.summary["items"], run.summary["ok"], run.summary["failed"]) == (judgments, judgments, 0)
        assert server.requests == judgments
        # System message, the YAML file's few-shot examples (a user/assistant pair each), the item.
        assert {len(body["messages"]) for body in server.bodies} == {2 + 2 * yaml_demos}
        first_prompt_chars = max(len(json.dumps(body["messages"])) for body in server.bodies)
        figures = run.summary["agreement"]
        if case.kind == "score":
            assert_figures(figures, expected, ["mae", "exact_agreement", "within_1", "qwk"])
        elif case.kind == "pairwise":
            assert_figures(figures, expected, ["accuracy", "kappa"])
            assert_figures(run.summary["pairs"], expected, ["consistency", "position_1_rate"])
        else:
            assert_figures(
                figures, expected, ["accuracy", "kappa"] + (["auroc"] if case.kind == "bool" else [])
            )

        # score (no model call): the same figures from the recorded run
        before = server.requests
        scored = jurist.score(task, tmp_path / "run", gold=data)
        assert server.requests == before
        assert scored.summary["agreement"] == run.summary["agreement"]

        # calibrate: one leaderboard row for the loopback judge
        calibration = jurist.calibrate(task, [data], [config], out=tmp_path / "cal", n_resamples=100)
        assert len(calibration.leaderboard) == 1
        row = calibration.leaderboard.iloc[0]
        assert (row["task"], row["items"], row["judgments"], row["failed"]) == (name, n, judgments, 0)
        assert_figures(row, expected, ["accuracy", "kappa"])
        if case.kind == "score":
            assert_figures(row, expected, ["mae"])
        if case.kind == "bool":
            assert_figures(row, expected, ["auroc"])
        if case.kind == "pairwise":
            assert_figures(row, expected, ["consistency", "position_1_rate"])
        assert (tmp_path / "cal" / "leaderboard.md").is_file()

        # optimize (bootstrap) on two disjoint halves of the file: even rows train, odd rows dev
        train_records, dev_records = records[0::2], records[1::2]
        train = write_jsonl(tmp_path / "train.jsonl", train_records)
        dev = write_jsonl(tmp_path / "dev.jsonl", dev_records)
        artifact = tmp_path / "compiled.json"
        # jurist.verbs.optimize is the verb behind jurist.optimization, which the subpackage
        # jurist.optimization shadows once imported (see the last test of this file).
        result = jurist.verbs.optimize(task, train, dev, config, out=artifact, optimizer="bootstrap")
        assert result.path == artifact and artifact.is_file()
        assert result.artifact.task == name
        dev_scores = [value for value, _ in example_scores(name, dev_records, start=1)]
        dev_expected = sum(dev_scores) / len(dev_scores)
        assert result.artifact.scores["dev_before"].score == pytest.approx(dev_expected)
        # The loopback's answers do not depend on the demos: the compiled judge scores the same.
        assert result.artifact.scores["dev_after"].score == pytest.approx(dev_expected)
        # Bootstrap keeps, in training order, the traces the loopback got right (score 1).
        right = [shown for value, shown in example_scores(name, train_records, start=0) if value == 1.0]
        demos = result.artifact.program["predict"]["demos"]
        assert [norm(demo[case.key_field]) for demo in demos] == right[:MAX_DEMOS]
        assert all(demo.get("reasoning") for demo in demos)

        # judge again with the compiled program: same figures, and the prompts carry the demos
        with_program = config.model_copy(update={"program": result.path})
        server.reset_count()
        rerun = jurist.judge(task, data, with_program, out=tmp_path / "run2", progress=False)
        assert rerun.summary["failed"] == 0
        # Same verdicts, same figures: intervals included (rows resampled in data order).
        assert rerun.summary["agreement"] == run.summary["agreement"]
        # The dev half was judged by the compiled program in optimize's dev_after evaluation
        # and comes from the cache: only the training half reaches the server again.
        assert server.requests == judgments - len(dev_records) * (2 if case.kind == "pairwise" else 1)
        demo_text = norm(demos[0][case.key_field])
        for body in server.bodies:
            messages = body["messages"]
            assert len(messages) == 2 + 2 * len(demos)
            assert any(demo_text in norm(m["content"]) for m in messages[1:-1] if m["role"] == "user")
        assert max(len(json.dumps(body["messages"])) for body in server.bodies) > first_prompt_chars
        assert oracle.misses == []

    # The prompt verb shows the compiled program's demos without calling the model.
    calls = jurist.prompt(task, data, with_program, row=0)
    assert len(calls) == (2 if case.kind == "pairwise" else 1)
    shown = calls[0]["messages"]
    assert len(shown) == 2 + 2 * len(demos)
    assert demo_text in norm(shown[1]["content"])
    assert "[[ ## verdict ## ]]" in shown[2]["content"]  # the demo's answer, as the assistant's turn


def test_example_task_file_on_the_command_line(tmp_path, monkeypatch, capsys):
    """``jurist judge`` / ``jurist score`` take a YAML task file path (baseline judge, offline)."""
    monkeypatch.chdir(REPO)
    task_file = "examples/mt-bench-grader/task.yaml"
    data = "examples/mt-bench-grader/answers.jsonl"
    out = tmp_path / "run"
    assert run_cli(["judge", task_file, data, "--out", str(out), "--no-progress"]) == 0
    assert (out / "summary.json").is_file()
    capsys.readouterr()
    assert run_cli(["score", task_file, str(out), "--gold", data, "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert (summary["items"], summary["failed"]) == (16, 0)
    api = jurist.score(task_file, out, gold=data)
    assert summary["agreement"]["mae"] == pytest.approx(api.summary["agreement"]["mae"])
    assert run_cli(["score", task_file, str(out), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["items"] == 16


def test_jurist_optimize_is_the_verb_after_the_optimization_package_is_imported():
    """Running a judge imports the subpackage ``jurist.optimization`` (which sets it as an
    attribute of ``jurist``); the verb ``jurist.optimize`` must not be shadowed by it."""
    import jurist.optimization  # what an LLM judge run (loading a compiled program) does

    assert jurist.optimize is jurist.verbs.optimize
    assert jurist.optimization.optimize is not jurist.optimize
