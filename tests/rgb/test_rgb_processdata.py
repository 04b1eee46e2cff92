"""RGB's passage preparation (``processdata``): counts, pool limits, order and seeding.

``reference_processdata`` below restates RGB's definition step by step with
Python's global ``random`` module re-seeded before every instance, as RGB's evaluation
loop does; :func:`prepare_instance` must give the very same passages in the same order.
"""

from __future__ import annotations

import copy
import math
import random
from typing import Any

import pytest
from rgb_support import DATA_DIR, fact_rows, plain_rows

from jurist.datasets.rgb.loader import RGBFactRow, RGBIntRow, RGBRow, load_rgb, prepare_instance


def reference_processdata(
    instance: dict[str, Any], noise_rate: float, passage_num: int, kind: str, correct_rate: float = 0.0
) -> list[str]:
    """RGB's ``processdata`` on a deep copy, drawing from the global generator."""
    instance = copy.deepcopy(instance)
    random.seed(2333)
    neg_num = math.ceil(passage_num * noise_rate)
    pos_num = passage_num - neg_num
    if kind == "int":
        for group in instance["positive"]:
            random.shuffle(group)
        docs = [group[0] for group in instance["positive"]]
        if len(docs) < pos_num:
            deepest = max(len(group) for group in instance["positive"])
            for depth in range(1, deepest):
                for group in instance["positive"]:
                    if len(group) > depth:
                        docs.append(group[depth])
                        if len(docs) == pos_num:
                            break
                if len(docs) == pos_num:
                    break
        neg_num = passage_num - len(docs)
        if neg_num > 0:
            docs += instance["negative"][:neg_num]
    elif kind == "fact":
        correct_num = math.ceil(passage_num * correct_rate)
        pos_num = passage_num - neg_num - correct_num
        indexes = list(range(len(instance["positive"])))
        picked = random.sample(indexes, min(len(indexes), pos_num))
        docs = [instance["positive_wrong"][i] for i in picked]
        left = [i for i in indexes if i not in picked]
        if correct_num > 0 and len(left) > 0:
            docs += [instance["positive"][i] for i in random.sample(left, min(len(left), correct_num))]
        if neg_num > 0:
            docs += instance["negative"][:neg_num]
    else:
        if noise_rate == 1:
            neg_num, pos_num = passage_num, 0
        elif neg_num > len(instance["negative"]):
            neg_num = len(instance["negative"])
            pos_num = passage_num - neg_num
        elif pos_num > len(instance["positive"]):
            pos_num = len(instance["positive"])
            neg_num = passage_num - pos_num
        docs = instance["positive"][:pos_num] + instance["negative"][:neg_num]
    random.shuffle(docs)
    return docs


def _rows(path):
    dataset = load_rgb(path)
    return [(row, row.model_dump()) for row in dataset]


@pytest.mark.parametrize("passage_num", [1, 3, 5, 10])
@pytest.mark.parametrize("noise_rate", [0.0, 0.2, 0.4, 0.6, 0.8, 1.0])
def test_same_passages_as_the_reference_on_rgb_slices(noise_rate, passage_num):
    for name, kind in (("zh_refine", "refine"), ("zh_int", "int")):
        for row, record in _rows(DATA_DIR / f"{name}.json"):
            prepared = prepare_instance(row, kind, noise_rate, passage_num)
            assert prepared.docs == reference_processdata(record, noise_rate, passage_num, kind), (
                name,
                row.id,
            )


@pytest.mark.parametrize(
    ("noise_rate", "correct_rate"), [(0.0, 0.0), (0.0, 0.2), (0.2, 0.4), (0.4, 0.4), (0.0, 1.0), (0.6, 0.2)]
)
def test_counterfactual_passages_match_the_reference(noise_rate, correct_rate):
    for name in ("en_fact", "zh_fact"):
        for row, record in _rows(DATA_DIR / f"{name}.json"):
            prepared = prepare_instance(row, "fact", noise_rate, 5, correct_rate=correct_rate)
            assert prepared.docs == reference_processdata(record, noise_rate, 5, "fact", correct_rate)


def _plain(positive: int, negative: int) -> RGBRow:
    return RGBRow(
        id=1,
        query="q",
        answer="a",
        positive=[f"P{i}" for i in range(positive)],
        negative=[f"N{i}" for i in range(negative)],
    )


@pytest.mark.parametrize(
    ("positive", "negative", "noise_rate", "expected"),
    [
        (5, 5, 0.0, ({"P0", "P1", "P2", "P3", "P4"}, set())),
        (5, 5, 0.4, ({"P0", "P1", "P2"}, {"N0", "N1"})),  # ceil(5 * 0.4) = 2 negatives
        (5, 5, 0.8, ({"P0"}, {"N0", "N1", "N2", "N3"})),
        # too few negatives: all of them, positives fill up
        (5, 1, 0.6, ({"P0", "P1", "P2", "P3"}, {"N0"})),
        # too few positives: all of them, negatives fill up
        (2, 5, 0.2, ({"P0", "P1"}, {"N0", "N1", "N2"})),
        # both too small: fewer passages than asked for
        (2, 1, 0.6, ({"P0", "P1"}, {"N0"})),
        # noise rate 1: negatives only, never a positive, even when there are few
        (5, 5, 1.0, (set(), {"N0", "N1", "N2", "N3", "N4"})),
        (5, 3, 1.0, (set(), {"N0", "N1", "N2"})),
        (5, 0, 1.0, (set(), set())),
    ],
)
def test_plain_counts_and_small_pools(positive, negative, noise_rate, expected):
    for kind in ("plain", "refine"):
        docs = prepare_instance(_plain(positive, negative), kind, noise_rate, 5).docs
        assert len(docs) == len(set(docs))
        assert {d for d in docs if d.startswith("P")} == expected[0]
        assert {d for d in docs if d.startswith("N")} == expected[1]


def test_fixed_seed_gives_the_same_passages_every_time_and_shuffles():
    row = _plain(10, 10)
    first = prepare_instance(row, "plain", 0.4, 10).docs
    assert first == prepare_instance(row, "plain", 0.4, 10).docs
    assert first != [*row.positive[:6], *row.negative[:4]]  # shuffled
    assert set(first) == {*row.positive[:6], *row.negative[:4]}
    # Another seed draws another order of the same passages.
    other = prepare_instance(row, "plain", 0.4, 10, seed=7).docs
    assert set(other) == set(first) and other != first


def test_closed_book_has_no_passages():
    for kind, row in (("plain", _plain(3, 3)), ("fact", RGBFactRow.model_validate(fact_rows(1)[0]))):
        assert prepare_instance(row, kind, 0.0, 0).docs == []


def _groups(*sizes: int, negative: int = 5) -> RGBIntRow:
    return RGBIntRow(
        id=1,
        query="q",
        answer=["a", "b"],
        positive=[[f"G{g}-{i}" for i in range(size)] for g, size in enumerate(sizes)],
        negative=[f"N{i}" for i in range(negative)],
    )


def test_integration_takes_one_passage_per_group_then_deeper_then_noise():
    docs = prepare_instance(_groups(3, 3), "int", 0.0, 5).docs  # pos_num 5: 2 firsts + 3 more
    assert len(docs) == 5 and not any(d.startswith("N") for d in docs)
    assert sum(d.startswith("G0") for d in docs) >= 2 and sum(d.startswith("G1") for d in docs) >= 2

    docs = prepare_instance(_groups(1, 1), "int", 0.0, 5).docs  # groups exhausted: negatives fill
    assert sorted(docs) == ["G0-0", "G1-0", "N0", "N1", "N2"]

    docs = prepare_instance(_groups(4, 4), "int", 0.6, 5).docs  # pos_num 2: one per group
    assert sum(d.startswith("G") for d in docs) == 2 and sorted(d for d in docs if d.startswith("N")) == [
        "N0",
        "N1",
        "N2",
    ]


def test_integration_keeps_one_passage_per_fact_even_past_pos_num_and_at_noise_1():
    docs = prepare_instance(_groups(2, 2, 2), "int", 0.8, 5).docs  # pos_num 1, but 3 facts
    assert sum(d.startswith("G") for d in docs) == 3
    assert sorted(d for d in docs if d.startswith("N")) == ["N0", "N1"]
    docs = prepare_instance(_groups(2, 2), "int", 1.0, 5).docs
    assert sum(d.startswith("G") for d in docs) == 2 and len(docs) == 5


def test_integration_does_not_change_the_row():
    row = _groups(4, 4)
    before = copy.deepcopy(row.positive)
    prepare_instance(row, "int", 0.0, 5)
    assert row.positive == before


def test_counterfactual_mix_of_wrong_correct_and_noise_passages():
    row = RGBFactRow(
        id=1,
        query="q",
        answer="a",
        positive=[f"P{i}" for i in range(4)],
        positive_wrong=[f"W{i}" for i in range(4)],
        negative=[f"N{i}" for i in range(3)],
    )
    docs = prepare_instance(row, "fact", 0.0, 5).docs  # 5 wrong asked, 4 exist
    assert sorted(docs) == ["W0", "W1", "W2", "W3"]
    docs = prepare_instance(row, "fact", 0.2, 5, correct_rate=0.4).docs  # 1 noise, 2 correct, 2 wrong
    wrong = {d[1:] for d in docs if d.startswith("W")}
    right = {d[1:] for d in docs if d.startswith("P")}
    assert len(wrong) == 2 and len(right) == 2 and not wrong & right  # never both versions of one passage
    assert [d for d in docs if d.startswith("N")] == ["N0"]
    with pytest.raises(ValueError, match="counterfactual passages"):
        prepare_instance(row, "fact", 0.8, 5, correct_rate=0.5)


def test_rates_are_checked():
    with pytest.raises(ValueError, match="noise rate"):
        prepare_instance(_plain(2, 2), "plain", 1.5, 5)
    with pytest.raises(ValueError, match="passage number"):
        prepare_instance(_plain(2, 2), "plain", 0.2, -1)


def test_hand_built_rows_match_the_reference():
    for record in plain_rows(4):
        row = RGBRow.model_validate(record)
        for rate in (0.0, 0.2, 0.6, 1.0):
            assert prepare_instance(row, "plain", rate, 5).docs == reference_processdata(
                record, rate, 5, "plain"
            )
