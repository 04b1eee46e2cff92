"""Juries, repeats and cascades on RAGBench: votes per sentence key, TRACe from the voted labels.

One loopback server answers every juror, telling them apart by model name; each juror labels
the sentences of an item by a fixed rule of their position (:func:`says`), so the test knows
every vote, computes the majority per key, TRACe from the voted labels and the agreement among
jurors per label kind by hand, and compares them with what jurist reports.
"""

from __future__ import annotations

import json
import shutil
from collections import defaultdict
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from jury_simulation import fleiss_kappa, juror_line, pairwise_agreement, write_jury

from jurist import verbs
from jurist.datasets.ragbench import load_ragbench
from jurist.datasets.samples import resolve_input
from jurist.errors import ConfigError
from jurist.jury import load_jury
from jurist.metrics.annotators import krippendorff_alpha_nominal
from jurist.runner import iter_run_results
from jurist.sentences import token_count
from jurist.tasks import get_task
from jurist.testing import OpenAICompatibleServer
from support import prompt_sections, run_cli

ROWS = 3
JURORS = ("juror-a", "juror-b", "juror-c")
KINDS = ("relevant", "utilized", "supported", "overall_supported")
SHIPPED = Path(__file__).parents[2] / "configs" / "jury-ragbench.yaml"


def says(model: str, documents: int, response: int) -> dict[str, Any]:
    """What a juror labels on an item with ``documents`` and ``response`` sentences (by position).

    juror-b labels as juror-a on items with an even number of document sentences."""
    if model == "juror-b" and documents % 2:
        return {
            "relevant": [i % 3 == 0 for i in range(documents)],
            "utilized": [i % 4 == 0 for i in range(documents)],
            "supported": [i == 0 for i in range(response)],
            "overall_supported": [False],
        }
    if model in ("juror-a", "juror-b"):
        return {
            "relevant": [i % 2 == 0 for i in range(documents)],
            "utilized": [i % 4 == 0 for i in range(documents)],
            "supported": [True] * response,
            "overall_supported": [True],
        }
    return {
        "relevant": [i < 4 for i in range(documents)],
        "utilized": [i % 2 == 0 for i in range(documents)],
        "supported": [False] * response,
        "overall_supported": [False],
    }


class Jurors:
    """The server's answers: by model name, and for the model ``repeater`` the ``n``-th call on
    an item answers as juror ``n`` (``JURORS[n - 1]``), so its three repeats label as the jury."""

    def __init__(self, items: dict[str, Any]) -> None:
        self.by_question = {item.inputs["question"]: item.inputs for item in items.values()}
        self.calls: dict[tuple[str, str], int] = defaultdict(int)

    def __call__(self, body: dict[str, Any]) -> str:
        inputs = self.by_question[prompt_sections(body)["question"].strip()]
        model = str(body["model"]).removeprefix("openai/")
        if model == "repeater":
            self.calls[(model, inputs["question"])] += 1
            model = JURORS[(self.calls[(model, inputs["question"])] - 1) % len(JURORS)]
        documents = [key for key, _ in inputs["document_sentences"]]
        response = [key for key, _ in inputs["response_sentences"]]
        labels = says(model, len(documents), len(response))
        support = [
            {
                "response_sentence_key": key,
                "explanation": f"{model} on {key}",
                "supporting_sentence_keys": documents[:1],
                "fully_supported": value,
            }
            for key, value in zip(response, labels["supported"], strict=True)
        ]
        fields = {
            "relevance_explanation": f"{model} relevance",
            "all_relevant_sentence_keys": json.dumps(
                [k for k, v in zip(documents, labels["relevant"], strict=True) if v]
            ),
            "overall_supported_explanation": f"{model} overall",
            "overall_supported": str(labels["overall_supported"][0]),
            "sentence_support_information": json.dumps(support),
            "all_utilized_sentence_keys": json.dumps(
                [k for k, v in zip(documents, labels["utilized"], strict=True) if v]
            ),
        }
        return "\n\n".join(f"[[ ## {k} ## ]]\n{v}" for k, v in fields.items()) + "\n\n[[ ## completed ## ]]"


@pytest.fixture(scope="module")
def rag(tmp_path_factory):
    """The data (the first rows of the bundled sample), its items, and the running server."""
    folder = tmp_path_factory.mktemp("ragjury")
    lines = resolve_input("sample:ragbench").read_text(encoding="utf-8").splitlines()[:ROWS]
    data = folder / "rows.jsonl"
    data.write_text("\n".join(lines) + "\n", encoding="utf-8")
    task = get_task("ragbench")
    items = {item.id: item for item in task.items(task.read(data, task.options()), task.options())}
    with OpenAICompatibleServer(Jurors(items)) as server:
        yield folder, data, items, server


def votes_of(item: Any, names: tuple[str, ...] = JURORS) -> dict[str, dict[str, list[bool]]]:
    """Label kind -> key -> each juror's label, as the test expects them."""
    documents = [key for key, _ in item.inputs["document_sentences"]]
    response = [key for key, _ in item.inputs["response_sentences"]]
    said = [says(name, len(documents), len(response)) for name in names]
    keys = {
        "relevant": documents,
        "utilized": documents,
        "supported": response,
        "overall_supported": ["response"],
    }
    return {kind: {key: [s[kind][i] for s in said] for i, key in enumerate(keys[kind])} for kind in KINDS}


def majority(votes: list[bool]) -> bool:
    return sum(votes) * 2 > len(votes)


def trace_by_hand(item: Any, voted: dict[str, dict[str, bool]]) -> dict[str, float]:
    tokens = {key: token_count(text) for key, text in item.inputs["document_sentences"]}
    relevant = {key for key, v in voted["relevant"].items() if v}
    utilized = {key for key, v in voted["utilized"].items() if v}
    supported = list(voted["supported"].values())
    total = sum(tokens.values())
    return {
        "context_relevance": sum(tokens[k] for k in relevant) / total,
        "context_utilization": sum(tokens[k] for k in utilized) / total,
        "completeness": sum(tokens[k] for k in relevant & utilized) / sum(tokens[k] for k in relevant),
        "context_relevance_by_sentences": len(relevant) / len(tokens),
        "adherence": all(supported),
        "adherence_fraction": sum(supported) / len(supported),
    }


def check_panel(run_dir: Path, summary: dict[str, Any], items: dict[str, Any], kind: str) -> None:
    """Every item's votes per key, its voted labels and TRACe, and the agreement per label kind."""
    outputs = {result.id: result.output for result in iter_run_results(run_dir)}
    rows: dict[str, list[list[bool]]] = {k: [] for k in KINDS}
    means = defaultdict(list)
    for item_id, item in items.items():
        expected = votes_of(item)
        output = outputs[item_id]
        assert output[kind]["labels"] == expected
        voted = {k: {key: majority(v) for key, v in keys.items()} for k, keys in expected.items()}
        assert output["all_relevant_sentence_keys"] == [k for k, v in voted["relevant"].items() if v]
        assert output["all_utilized_sentence_keys"] == [k for k, v in voted["utilized"].items() if v]
        assert output["overall_supported"] is voted["overall_supported"]["response"]
        support = {s["response_sentence_key"]: s for s in output["sentence_support_information"]}
        for key, value in voted["supported"].items():
            assert support[key]["fully_supported"] is value
            # The explanation of the first juror (in order) who gave the voted label.
            first = next(
                name for name, v in zip(JURORS, expected["supported"][key], strict=True) if v is value
            )
            assert support[key]["explanation"] == f"{first} on {key}"
        for name, value in trace_by_hand(item, voted).items():
            assert output["scores"][name] == pytest.approx(value)
            means[name].append(value)
        for k in KINDS:
            rows[k] += list(expected[k].values())
    trace = summary["trace"]
    for name in ("context_relevance", "context_utilization", "completeness", "adherence_fraction"):
        assert trace[name]["mean"] == pytest.approx(sum(means[name]) / len(items))
    assert trace["adherence"]["mean"] == pytest.approx(sum(means["adherence"]) / len(items))
    agreement = "agreement" if kind == "jury" else "self_consistency"
    for k in KINDS:
        found = summary[kind]["labels"][k]
        assert found["keys"] == len(rows[k])
        assert found["split"] == sum(len(set(r)) > 1 for r in rows[k])
        figures = found[agreement]
        assert figures["items"] == len(rows[k]) and figures["groups"] == len(items)
        assert figures["pairwise_agreement"] == pytest.approx(pairwise_agreement(rows[k]))
        assert figures["fleiss_kappa"] == pytest.approx(fleiss_kappa(rows[k]))
        assert figures["krippendorff_alpha"] == pytest.approx(krippendorff_alpha_nominal(rows[k]))
        assert figures["fleiss_kappa_low"] <= figures["fleiss_kappa"] <= figures["fleiss_kappa_high"]
        pair = found["pairs"][0]  # juror-a and juror-b
        assert pair["agreement"] == pytest.approx(sum(r[0] == r[1] for r in rows[k]) / len(rows[k]))


def test_repeats_through_the_command_line_vote_per_key_and_report_self_consistency_per_label(rag, capsys):
    folder, data, items, server = rag
    config = folder / "repeater.yaml"
    config.write_text(
        f"model: openai/repeater\napi_base: {server.base_url}\napi_key_env: JURIST_TEST_API_KEY\n"
        f"cache_dir: {folder / 'cache-repeats'}\nretry_max_wait: 0.2\ntimeout: 5\n",
        encoding="utf-8",
    )
    out = folder / "repeats"
    args = ["judge", "ragbench", str(data), "-c", str(config), "--repeats", "3", "--out", str(out)]
    assert run_cli([*args, "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "self-consistency across repeats, per label" in printed
    assert "  utilized (" in printed
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    check_panel(out, summary, items, "repeats")
    assert "## repeats: 3 asks of" in (out / "report.md").read_text(encoding="utf-8")


def test_the_shipped_ragbench_jury_votes_per_sentence_key_and_recomputes_trace_from_the_votes(rag, capsys):
    folder, data, items, server = rag
    shipped = load_jury(SHIPPED)
    assert len(shipped.jurors) == 3
    # A copy of the shipped jury file, its jurors' config files replaced by loopback ones.
    home = folder / "shipped"
    home.mkdir()
    copy = Path(shutil.copy(SHIPPED, home / SHIPPED.name))
    for juror, name in zip(shipped.jurors, JURORS, strict=True):
        assert juror.config.source is not None and Path(juror.config.source).parent == SHIPPED.parent
        (home / Path(juror.config.source).name).write_text(
            f"model: openai/{name}\napi_base: {server.base_url}\napi_key_env: JURIST_TEST_API_KEY\n"
            f"cache_dir: {folder / 'cache'}\nretry_max_wait: 0.2\ntimeout: 5\n",
            encoding="utf-8",
        )
    out = folder / "jury"
    assert run_cli(["judge", "ragbench", str(data), "-c", str(copy), "--out", str(out), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "agreement among jurors, per label:" in printed and "  relevant (" in printed
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert [m["name"] for m in summary["jury"]["members"]] == [j.name for j in shipped.jurors]
    assert summary["items"] == summary["ok"] == ROWS
    check_panel(out, summary, items, "jury")
    # juror-a and juror-b label alike only on the item with an even number of document sentences.
    even = [i for i, item in items.items() if len(item.inputs["document_sentences"]) % 2 == 0]
    assert len(even) == 1
    votes = summary["jury"]["votes"]
    assert votes["items"] == ROWS and votes["split"] == ROWS and votes["no_votes"] == 0

    table = pd.read_parquet(out / "items.parquet").set_index("id")
    split = json.loads(table.loc[even[0], "jury_votes"])  # only the keys the jurors split on
    assert split["supported"] == {key: [True, True, False] for key in votes_of(items[even[0]])["supported"]}
    assert all(len(set(v)) > 1 for keys in split.values() for v in keys.values())
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "agreement among jurors, per label" in report
    assert "| supported |" in report and "| gpt – claude |" in report
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "Agreement among jurors, per label" in html


def test_a_ragbench_cascade_sends_on_the_items_its_jury_splits_on(rag):
    folder, data, items, server = rag
    lines = [juror_line(name, server.base_url, folder / "cache") for name in JURORS[:2]]
    write_jury(folder / "pair.yaml", lines)
    last = juror_line("juror-c", server.base_url, folder / "cache").strip().removeprefix("- {")[:-1]
    cascade = folder / "cascade.yaml"
    cascade.write_text(
        f"cascade:\n  stages:\n    - {{name: pair, jury: pair.yaml}}\n    - {{name: last, {last}}}\n",
        encoding="utf-8",
    )
    run = verbs.judge("ragbench", data, cascade, out=folder / "cascade", progress=False)
    even = {i for i, item in items.items() if len(item.inputs["document_sentences"]) % 2 == 0}
    stages = run.set_index("id")["cascade_stage"]
    assert {i for i in items if stages[i] == "pair"} == even
    outputs = {result.id: result.output for result in iter_run_results(folder / "cascade")}
    for item_id, item in items.items():
        said = says("juror-a" if item_id in even else "juror-c", len(item.inputs["document_sentences"]), 1)
        documents = [key for key, _ in item.inputs["document_sentences"]]
        relevant = [key for key, value in zip(documents, said["relevant"], strict=True) if value]
        assert outputs[item_id]["all_relevant_sentence_keys"] == relevant
        if item_id not in even:
            assert "jurors disagree" in outputs[item_id]["cascade"]["reasons"]["pair"]
    # Two jurors: a key they split on is a tie, decided by the first juror in order.
    pair = {result.id: result.output for result in iter_run_results(folder / "cascade" / "stages" / "pair")}
    for item_id, item in items.items():
        expected = votes_of(item, JURORS[:2])
        tied = {kind: [key for key, v in keys.items() if v[0] != v[1]] for kind, keys in expected.items()}
        assert pair[item_id]["jury"]["ties"] == {kind: keys for kind, keys in tied.items() if keys}
        first = [key for key, v in expected["relevant"].items() if v[0]]
        assert pair[item_id]["all_relevant_sentence_keys"] == first


def test_a_ragbench_panel_refuses_what_cannot_apply_before_any_call(rag):
    folder, data, _, server = rag
    requests = server.requests
    lines = [juror_line(name, server.base_url, folder / "cache") for name in JURORS]
    mean = write_jury(folder / "mean.yaml", lines, aggregate="mean")
    with pytest.raises(ConfigError, match="needs numeric labels"):
        verbs.judge("ragbench", data, mean, out=folder / "mean", progress=False)
    # RAGBench gives no confidence: a model stage cannot send items on by one.
    stage = juror_line("juror-a", server.base_url, folder / "cache").strip().removeprefix("- {")[:-1]
    sure = folder / "sure.yaml"
    sure.write_text(
        f"cascade:\n  stages:\n    - {{name: first, escalate_below: 0.8, {stage}}}\n"
        "    - {name: last, model: openai/juror-c}\n",
        encoding="utf-8",
    )
    with pytest.raises(ConfigError, match="gives none"):
        verbs.judge("ragbench", data, sure, out=folder / "sure", progress=False)
    assert not (folder / "mean").exists() and not (folder / "sure").exists()
    assert server.requests == requests


def test_calibrate_judges_ragbench_by_the_jury_and_the_row_names_the_jury(rag):
    """The calibrate verb, not the task, judges the gold file: with a jury config its row is the
    jury's (its run voted from the jurors' runs, no further call), then one row per juror."""
    folder, data, items, server = rag
    lines = [juror_line(name, server.base_url, folder / "cache-calibrate") for name in JURORS]
    jury = write_jury(folder / "calibrated.yaml", lines)
    out = folder / "calibration"
    requests = server.requests
    args = ["calibrate", "ragbench", "--gold", str(data), "-c", str(jury), "--out", str(out), "--no-progress"]
    assert run_cli(args) == 0
    assert server.requests - requests == len(JURORS) * ROWS  # each juror judged each item once

    gold = {row.id: row.adherence_score for row in load_ragbench(data)}
    assert len(gold) == ROWS and None not in gold.values()

    def accuracy(adherent: dict[str, bool]) -> float:
        return sum(adherent[item] == gold[item] for item in gold) / len(gold)

    def adherence(names: tuple[str, ...]) -> dict[str, bool]:
        return {
            item_id: all(majority(votes) for votes in votes_of(item, names)["supported"].values())
            for item_id, item in items.items()
        }

    board = pd.read_csv(out / "leaderboard.csv").set_index("judge")
    assert sorted(board.index) == ["calibrated", *(f"calibrated/{name}" for name in JURORS)]
    row = board.loc["calibrated"]
    assert row["model"] == f"jury of {', '.join(JURORS)} (majority)"
    assert (row["task"], row["dataset"], row["items"], row["failed"]) == ("ragbench", "rows", ROWS, 0)
    assert row["accuracy"] == pytest.approx(accuracy(adherence(JURORS)))
    run_dir = Path(row["run_dir"])
    assert run_dir.name == "rows" and run_dir.parent.name.startswith("calibrated-")
    assert all("jury" in result.output for result in iter_run_results(run_dir))
    # The row compares the voted adherence (not juror-a's, the first juror's) with gold.
    voted = pd.read_parquet(run_dir / "items.parquet").set_index("id")["adherence"]
    assert {item: bool(voted[item]) for item in items} == adherence(JURORS) != adherence(JURORS[:1])
    for name in JURORS:
        juror = board.loc[f"calibrated/{name}"]
        assert juror["model"] == f"openai/{name}"
        assert juror["accuracy"] == pytest.approx(accuracy(adherence((name,))))
        assert Path(juror["run_dir"]).parent.parent == out / "runs" / "calibrated"
    by_label = pd.read_csv(out / "by_label.csv")
    assert set(by_label["judge"]) == {"calibrated", *(f"calibrated/{name}" for name in JURORS)}
