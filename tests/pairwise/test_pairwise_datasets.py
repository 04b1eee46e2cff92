"""SubEval tables, comparisons, pairs files and record tables: reading and clear errors."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from jurist.datasets.pairwise.tables import (
    build_comparisons,
    load_pairs,
    load_subeval_table,
    normalize_label,
    read_record_table,
    subeval_models,
)
from jurist.errors import InputError

DATA = Path(__file__).parents[1] / "data"
DEVBENCH = DATA / "devbench-subeval"
EXAMPLE = DEVBENCH / "examples" / "DevBench_projects_example.xlsx"
RUN = DEVBENCH / "output" / "DevBench_projects_example_infer_input_2680_record0_gpt-4-1106-preview_2"
RECORD = RUN / "record_gpt-4-1106-preview_2.tsv"


@pytest.fixture(scope="module")
def example() -> pd.DataFrame:
    return load_subeval_table(EXAMPLE)


def test_reads_the_devbench_xlsx(example: pd.DataFrame) -> None:
    assert len(example) == 4
    assert list(example.columns[:5]) == [
        "question",
        "index",
        "evaluating_guidance",
        "task",
        "reference_answer",
    ]
    assert len(subeval_models(example)) == 10
    assert "gpt-3.5-turbo-1106" in subeval_models(example)
    assert list(example["reference_answer"]) == [""] * 4
    assert example.attrs["source"] == str(EXAMPLE)


@pytest.mark.parametrize("kind", ["csv", "tsv", "jsonl", "parquet", "frame"])
def test_every_format_reads_the_same_table(example: pd.DataFrame, tmp_path: Path, kind: str) -> None:
    frame = example.rename(columns={"question": "questions"})
    if kind == "frame":
        source: Path | pd.DataFrame = frame
    else:
        source = tmp_path / f"table.{kind}"
        if kind == "csv":
            frame.to_csv(source, index=False)
        elif kind == "tsv":
            frame.to_csv(source, sep="\t", index=False)
        elif kind == "parquet":
            frame.to_parquet(source, index=False)
        else:
            source.write_text(
                "\n".join(json.dumps(r) for r in frame.to_dict(orient="records")), encoding="utf-8"
            )
    loaded = load_subeval_table(source)
    pd.testing.assert_frame_equal(loaded, example, check_dtype=False)


def test_fill_contents_from_files(example: pd.DataFrame, tmp_path: Path) -> None:
    frame = example.copy()
    frame["evaluating_guidance"] = [f"evaluating_guidance/{t.replace('-', '/')}.txt" for t in frame["task"]]
    (tmp_path / "prd.txt").write_text("the PRD", encoding="utf-8")
    (tmp_path / "task.txt").write_text("draw it", encoding="utf-8")
    frame["question"] = [f"PRD: {tmp_path / 'prd.txt'};Task: {tmp_path / 'task.txt'}"] * 4
    filled = load_subeval_table(frame, fill_contents=["evaluating_guidance", "question"], base_dir=DEVBENCH)
    assert list(filled["evaluating_guidance"]) == list(example["evaluating_guidance"])
    assert filled.at[0, "question"] == "PRD: the PRD;Task: draw it"

    frame.at[2, "evaluating_guidance"] = "evaluating_guidance/nowhere.txt"
    with pytest.raises(InputError) as caught:
        load_subeval_table(frame, fill_contents=["evaluating_guidance"], base_dir=DEVBENCH)
    assert (caught.value.line, caught.value.field) == (3, "evaluating_guidance")
    assert "nowhere.txt" in str(caught.value)
    with pytest.raises(InputError, match="fill from files") as caught:
        load_subeval_table(frame, fill_contents=["rubric"])
    assert caught.value.field == "rubric"


def test_missing_answer_columns_and_duplicate_index(example: pd.DataFrame, tmp_path: Path) -> None:
    path = tmp_path / "no_answers.csv"
    example[["question", "index", "evaluating_guidance", "task"]].to_csv(path, index=False)
    with pytest.raises(InputError, match="answer-") as caught:
        load_subeval_table(path)
    assert (caught.value.path, caught.value.line, caught.value.field) == (str(path), 1, "answer-{model}")

    path = tmp_path / "duplicate.csv"
    small = pd.DataFrame({"question": ["q"] * 3, "index": ["a", "b", "a"], "answer-m": ["x", "y", "z"]})
    small.to_csv(path, index=False)
    with pytest.raises(InputError, match="repeats line 2") as caught:
        load_subeval_table(path)
    assert (caught.value.line, caught.value.field) == (4, "index")
    with pytest.raises(InputError, match="repeats line 1") as caught:
        load_subeval_table(small)  # a DataFrame's lines are its 1-based row positions
    assert (caught.value.path, caught.value.line) == ("<DataFrame>", 3)


def test_comparisons_against_a_reference_in_both_orders(example: pd.DataFrame) -> None:
    comparisons = build_comparisons(
        example, models=["gpt-4-0125-preview", "gpt-4-0613"], reference_model="gpt-3.5-turbo-1106"
    )
    assert len(comparisons) == 2 * 4 * 2
    first = comparisons.iloc[0]
    assert first["cmp_index"] == "idcenter_uml_class-general;gpt-3.5-turbo-1106;gpt-4-0125-preview"
    assert (first["A"], first["B"], first["order"]) == ("gpt-3.5-turbo-1106", "gpt-4-0125-preview", 1)
    swapped = comparisons.iloc[1]
    assert swapped["cmp_index"] == "idcenter_uml_class-general;gpt-4-0125-preview;gpt-3.5-turbo-1106"
    assert (swapped["answer1"], swapped["answer2"]) == (first["answer2"], first["answer1"])
    assert list(comparisons.columns[:9]) == [
        "cmp_index",
        "question",
        "answer1",
        "answer2",
        "A",
        "B",
        "reference_answer",
        "evaluating_guidance",
        "task",
    ]


def test_comparisons_reproduce_the_devbench_record(example: pd.DataFrame) -> None:
    comparisons = build_comparisons(
        example, models=["gpt-4-0125-preview"], reference_model="gpt-3.5-turbo-1106"
    )
    record = pd.read_csv(RECORD, sep="\t")
    for column in ("cmp_index", "question", "answer1", "answer2", "A", "B", "evaluating_guidance", "task"):
        assert list(comparisons[column]) == list(record[column]), column


def test_all_pairs_skip_missing_answers_and_flag_exact_matches(example: pd.DataFrame) -> None:
    table = example.copy()
    table.at[1, "answer-gpt-4-0613"] = None
    table["answer-copy"] = table["answer-gpt-4-0613"]
    comparisons = build_comparisons(table, models=["gpt-4-0613", "gpt-4-0125-preview", "copy"])
    assert len(comparisons) == 3 * 3 * 2  # 3 pairs, 3 questions with both answers, 2 orders
    exact = comparisons[comparisons["exact_match"]]
    assert set(exact["A"]) | set(exact["B"]) == {"gpt-4-0613", "copy"}
    assert len(exact) == 6


def test_unknown_models_give_clear_errors(example: pd.DataFrame) -> None:
    with pytest.raises(InputError, match="unknown reference model 'gpt-5'") as caught:
        build_comparisons(example, reference_model="gpt-5")
    assert (caught.value.field, caught.value.path) == ("reference_model", str(EXAMPLE))
    with pytest.raises(InputError, match="no column 'answer-llama'") as caught:
        build_comparisons(example, models=["llama"], reference_model="gpt-4-0613")
    assert caught.value.field == "answer-llama"
    with pytest.raises(InputError, match="at least two models"):
        build_comparisons(example, models=["gpt-4-0613"], reference_model="gpt-4-0613")


def test_llmbar_pairs() -> None:
    pairs = load_pairs(DATA / "llmbar" / "natural_sample.json")
    assert len(pairs) == 12
    assert list(pairs.columns) == [
        "id",
        "question",
        "response_1",
        "response_2",
        "reference",
        "label",
        "annotations",
        "dataset",
    ]
    assert list(pairs["id"][:3]) == ["1", "2", "3"]
    assert set(pairs["label"]) == {"1", "2"}
    assert set(pairs["dataset"]) == {"natural_sample"}
    assert (
        load_pairs(DATA / "llmbar" / "natural_sample.json", dataset="Natural")["dataset"].iloc[0] == "Natural"
    )


def test_pairs_aliases_and_bad_labels(tmp_path: Path) -> None:
    path = tmp_path / "mt.csv"
    pd.DataFrame(
        {
            "question_id": [81, 82],
            "Prompt": ["q1", "q2"],
            "response_a": ["x", "y"],
            "response_b": ["z", "w"],
            "winner": ["model_b", "tie"],
        }
    ).to_csv(path, index=False)
    pairs = load_pairs(path)
    assert list(pairs["id"]) == ["81", "82"] and list(pairs["label"]) == ["2", "tie"]
    assert list(pairs["dataset"]) == ["mt", "mt"]

    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        '{"input": "q", "output_1": "a", "output_2": "b", "label": 1}\n'
        '{"input": "q", "output_1": "a", "output_2": "b", "label": 7}\n',
        encoding="utf-8",
    )
    with pytest.raises(InputError, match="unknown preference label") as caught:
        load_pairs(bad)
    assert (caught.value.line, caught.value.field) == (2, "label")
    with pytest.raises(InputError, match="match no preference-data shape") as caught:
        load_pairs(pd.DataFrame({"question": ["q"], "response_1": ["a"]}))
    assert caught.value.line == 1
    for shape in ("llmbar", "alpacaeval", "mt-bench-human", "arena", "alpaca-pairs", "pairs"):
        assert shape in str(caught.value)
    assert normalize_label(None) is None
    with pytest.raises(ValueError):
        normalize_label("maybe")


def test_record_tables(tmp_path: Path) -> None:
    table = read_record_table(RECORD)
    assert (table.judge, table.num_options, len(table.frame)) == ("gpt-4-1106-preview", 2, 8)
    assert table.frame.at[0, "index"] == "idcenter_uml_class-general"
    assert table.frame.at[0, "judgement"].startswith("Choice: B")

    record = pd.read_csv(RECORD, sep="\t")
    capitalized = record.rename(columns={"cmp_index": "Cmp_index", "question": "Question", "task": "Task"})
    assert len(read_record_table(capitalized).frame) == 8

    with pytest.raises(InputError, match="which column holds the judge") as caught:
        read_record_table(record.assign(other_judge="x"))
    assert caught.value.field == "judge"
    assert (
        read_record_table(record.assign(other_judge="x"), judge_column="other_judge").judge == "other_judge"
    )

    broken = record.copy()
    broken.at[3, "cmp_index"] = "idcenter;gpt-3.5-turbo-1106;someone-else"
    path = tmp_path / "record_j_2.csv"
    broken.to_csv(path, index=False)
    with pytest.raises(InputError, match="does not end in") as caught:
        read_record_table(path)
    assert (caught.value.field, caught.value.path) == ("cmp_index", str(path))
    with pytest.raises(InputError, match="'B'"):
        read_record_table(record.drop(columns=["B"]))
    with pytest.raises(InputError, match="repeats line 1") as caught:
        read_record_table(pd.concat([record, record.iloc[[0]]], ignore_index=True))
    assert (caught.value.line, caught.value.field) == (9, "cmp_index")
