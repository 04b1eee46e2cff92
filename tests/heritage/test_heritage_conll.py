"""Token-tag (CoNLL / BIO / IOBES) heritage gold and predictions: decoding as seqeval does it.

Fixtures in tests/data/heritage/ (see SOURCE.txt there): 12 texts of the bundled heritage
gold as IOB2 (CoNLL-2003 columns) and IOBES tags, and the offline baseline's entities on
them as a sloppy tagger writes them (IOB1-style ``I-`` starts in every other sentence).
"""

from __future__ import annotations

import json
import random
import warnings
from pathlib import Path

import pytest

from jurist.datasets.heritage.conll import (
    TagDecoding,
    decode_lenient,
    decode_strict,
    detect_scheme,
    read_token_tags,
)
from jurist.datasets.heritage.gold import load_heritage_gold
from jurist.errors import InputError
from jurist.tasks.heritage.score_tags import score_tagged_predictions
from support import run_cli

DATA = Path(__file__).parent.parent / "data" / "heritage"
GOLD = DATA / "heritage_ner.conll"
GOLD_IOBES = DATA / "heritage_ner.iobes"
PRED = DATA / "heritage_ner_pred.conll"
LABELS = "GRP.HER.MUS,GRP.HER.ARC,GRP.HER.LIB,GRP.HER.SOC,TOP,TMP,IDENTIFIER"
SCHEME_PREFIXES = {"IOB1": "IOB", "IOB2": "IOB", "IOBES": "IOBES", "BILOU": "BILOU"}


def _random_tags(rng: random.Random, prefixes: str, n: int) -> list[str]:
    tags = []
    for _ in range(n):
        prefix = rng.choice(prefixes + "OO")
        tags.append("O" if prefix == "O" else f"{prefix}-{rng.choice(['PER', 'LOC', 'GRP.HER.MUS', 'A-B'])}")
    return tags


def test_decoding_matches_seqeval_on_random_tag_sequences() -> None:
    pytest.importorskip("seqeval")
    from seqeval.metrics.sequence_labeling import get_entities
    from seqeval.scheme import BILOU, IOB1, IOB2, IOBES, Entities

    classes = {"IOB1": IOB1, "IOB2": IOB2, "IOBES": IOBES, "BILOU": BILOU}
    rng = random.Random(13)
    for _ in range(3000):
        scheme = rng.choice(list(classes))
        tags = _random_tags(rng, SCHEME_PREFIXES[scheme].replace("O", ""), rng.randint(0, 12))
        strict = [(e.start, e.end, e.tag) for e in Entities([tags], classes[scheme]).entities[0]]
        assert decode_strict(tags, scheme) == strict, (scheme, tags)  # type: ignore[arg-type]
        # Lenient: seqeval's get_entities (end inclusive); BILOU's L/U read as E/S.
        as_iobes = [{"L": "E", "U": "S"}.get(t[0], t[0]) + t[1:] if t != "O" else t for t in tags]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lenient = [(start, end + 1, label) for label, start, end in get_entities(as_iobes)]
        assert decode_lenient(tags) == lenient, tags


def test_scheme_detection_follows_seqeval() -> None:
    pytest.importorskip("seqeval")
    from seqeval.scheme import BILOU, IOB2, IOBES, auto_detect

    for sequences, ours, theirs in (
        ([["B-PER", "I-PER", "O"]], "IOB2", IOB2),
        ([["B-PER", "E-PER", "S-LOC", "O"]], "IOBES", IOBES),
        ([["B-PER", "L-PER", "U-LOC"]], "BILOU", BILOU),
    ):
        assert detect_scheme(sequences) == ours
        assert auto_detect(sequences) is theirs
    with pytest.raises(ValueError, match="IOB1"):
        detect_scheme([["I-PER", "O", "I-LOC"]])  # IOB1 is never detected


def test_token_tag_file_is_heritage_gold() -> None:
    original = {e.id: e for e in load_heritage_gold("sample:heritage").entries}
    gold = load_heritage_gold(GOLD)
    assert len(gold) == 12 and gold.tags == TagDecoding("lenient", None)
    assert [e.id for e in gold.entries[:2]] == ["s1", "s2"]
    assert [e.metadata["document"] for e in gold.entries] == [1] * 6 + [2] * 6
    assert gold.entries[0].metadata["line"] == 3
    for n, entry in enumerate(gold.entries, start=1):
        source = original[f"nl-{n:03d}"]
        # Same entities, same types; their text is the tokens joined by spaces.
        assert [a.type for a in entry.ner_annotations] == [a.type for a in source.ner_annotations]
        assert [a.text.replace(" ", "") for a in entry.ner_annotations] == [
            a.text.replace(" ", "") for a in source.ner_annotations
        ]
    first = gold.entries[0]
    assert first.ner_annotations[0].text == "Rijksmuseum" and first.text.startswith("Het Rijksmuseum ( ISIL")
    assert first.ner_annotations[1].text == "NL - RIJ"
    # The IOBES file (tabs, no -DOCSTART-) decodes to the same entities, leniently or strictly.
    for decoding in (TagDecoding(), TagDecoding("strict")):
        iobes = load_heritage_gold(GOLD_IOBES, tags=decoding)
        assert [e.spans() for e in iobes.entries] == [e.spans() for e in gold.entries]
    assert load_heritage_gold(GOLD_IOBES, tags=TagDecoding("strict")).tags == TagDecoding("strict", "IOBES")


@pytest.mark.parametrize(
    ("content", "line", "fragment"),
    [
        ("Het O\nRijksmuseum X-MUS\n", 2, "'X-MUS' is not O"),
        ("Het O\nRijksmuseum\n", 2, "a token and a tag"),
        ("Het O\nRijksmuseum B-\n", 2, "'B-' is not O"),
    ],
)
def test_bad_lines_are_named(tmp_path: Path, content: str, line: int, fragment: str) -> None:
    path = tmp_path / "bad.bio"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_heritage_gold(path)
    assert info.value.line == line and info.value.field == "tag" and fragment in str(info.value)
    assert "bad.bio" in str(info.value)


def test_strict_decoding_refuses_what_the_scheme_does_not_allow(tmp_path: Path) -> None:
    path = tmp_path / "gold.iob"
    path.write_text("-DOCSTART- O\n\nHet O\nmuseum I-MUS\n\nDe S-TOP\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_heritage_gold(path, tags=TagDecoding("strict", "IOB2"))
    assert info.value.line == 6 and "'S-TOP'" in str(info.value)
    path.write_text("Het O\nmuseum I-MUS\n", encoding="utf-8")
    with pytest.raises(InputError, match="cannot detect the tag scheme") as info:
        load_heritage_gold(path, tags=TagDecoding("strict"))
    assert info.value.field == "tag_scheme"
    # IOB1 named: an I- after O starts an entity; in lenient mode too; in strict IOB2 it is none.
    assert load_heritage_gold(path, tags=TagDecoding("strict", "IOB1")).entries[0].spans() == [(4, 10, "MUS")]
    assert load_heritage_gold(path).entries[0].spans() == [(4, 10, "MUS")]
    assert read_token_tags(path)[0].tags == ("O", "I-MUS")


def _seqeval_report(mode: str | None) -> dict:
    from seqeval.metrics import classification_report
    from seqeval.scheme import IOB2

    true = [list(s.tags) for s in read_token_tags(GOLD)]
    pred = [list(s.tags) for s in read_token_tags(PRED)]
    extra = {"mode": "strict", "scheme": IOB2} if mode == "strict" else {}
    return classification_report(true, pred, output_dict=True, zero_division=0, **extra)


@pytest.mark.parametrize("mode", ["lenient", "strict"])
def test_tagged_predictions_score_like_seqeval(mode: str) -> None:
    pytest.importorskip("seqeval")
    scores = score_tagged_predictions(PRED, GOLD, tags=TagDecoding(mode))  # type: ignore[arg-type]
    ner = scores.summary["ner"]
    reference = _seqeval_report(mode)
    assert ner["strict"]["precision"] == pytest.approx(reference["micro avg"]["precision"])
    assert ner["strict"]["recall"] == pytest.approx(reference["micro avg"]["recall"])
    assert ner["strict"]["f1"] == pytest.approx(reference["micro avg"]["f1-score"])
    for label, row in reference.items():
        if "avg" not in label:
            assert ner["strict"]["per_type"][label]["f1"] == pytest.approx(row["f1-score"])
            assert ner["strict"]["per_type"][label]["support"] == row["support"]
    assert ner["tags"] == {"mode": mode, "scheme": "IOB2" if mode == "strict" else None}
    assert f"{mode} decoding" in scores.report


def test_strict_and_lenient_differ_on_the_sloppy_tagger() -> None:
    lenient = score_tagged_predictions(PRED, GOLD).summary["ner"]["strict"]
    strict = score_tagged_predictions(PRED, GOLD, tags=TagDecoding("strict")).summary["ner"]["strict"]
    # Strict IOB2 drops every entity that starts with I-, so it finds fewer.
    assert strict["true_positives"] < lenient["true_positives"]
    assert (
        strict["true_positives"] + strict["false_positives"]
        < lenient["true_positives"] + lenient["false_positives"]
    )


def test_predictions_must_line_up_with_the_gold(tmp_path: Path) -> None:
    lines = PRED.read_text(encoding="utf-8").splitlines()
    shifted = tmp_path / "pred.conll"
    shifted.write_text("\n".join(line.replace("Rijksmuseum", "Museum") for line in lines), encoding="utf-8")
    with pytest.raises(InputError) as info:
        score_tagged_predictions(shifted, GOLD)
    assert info.value.line == 4 and info.value.field == "token" and "'Museum'" in str(info.value)
    short = tmp_path / "short.conll"
    short.write_text("Het O\n", encoding="utf-8")
    with pytest.raises(InputError, match="1 sentences, but the gold"):
        score_tagged_predictions(short, GOLD)
    # Against the JSONL gold the tokens are found in the original text (whitespace between them).
    jsonl = tmp_path / "gold.jsonl"
    entries = load_heritage_gold("sample:heritage").entries[:12]
    jsonl.write_text("".join(json.dumps(e.model_dump(mode="json")) + "\n" for e in entries), encoding="utf-8")
    via_jsonl = score_tagged_predictions(PRED, jsonl).summary["ner"]["strict"]
    assert via_jsonl == score_tagged_predictions(PRED, GOLD).summary["ner"]["strict"]


def test_cli_scores_tagged_predictions_and_judges_a_conll_gold(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("seqeval")
    args = ["score", "heritage-ner", str(PRED), "--gold", str(GOLD), "--tag-mode", "strict", "--json"]
    assert run_cli(args) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["ner"]["strict"]["f1"] == pytest.approx(_seqeval_report("strict")["micro avg"]["f1-score"])
    out = tmp_path / "run"
    judge = ["judge", "heritage-ner", str(GOLD), "--out", str(out), "--no-progress", "--tag-scheme", "IOB2"]
    assert run_cli([*judge, "--labels", LABELS]) == 0
    capsys.readouterr()
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["dataset"]["tags"] == {"mode": "strict", "scheme": "IOB2"}
    assert run_cli(["score", "heritage-ner", str(out)]) == 0
    assert "Gold read from a token-tag file, strict decoding, scheme IOB2." in capsys.readouterr().out


def test_ner_optimization_reads_token_tag_gold_with_the_task_decoding(tmp_path: Path) -> None:
    from jurist.tasks import get_task

    path = tmp_path / "train.iob"
    path.write_text("Het O\nmuseum I-TOP\n\nDe O\nstad B-TOP\n", encoding="utf-8")
    task = get_task("heritage-ner")
    lenient = task.gold_examples(path, task.options({"labels": ["TOP"]}))
    strict = task.gold_examples(path, task.options({"labels": ["TOP"], "tag_scheme": "IOB2"}))
    assert [len(e.gold_spans) for e in lenient] == [1, 1]
    assert [len(e.gold_spans) for e in strict] == [0, 1]  # strict IOB2: an I- after O is no entity


def test_cli_scores_conll_2003_types_without_naming_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gold = tmp_path / "gold.conll"
    gold.write_text("EU NNP B-NP B-ORG\nrejects VBZ B-VP O\nGerman JJ B-NP B-MISC\n", encoding="utf-8")
    pred = tmp_path / "pred.conll"
    pred.write_text("EU NNP B-NP B-ORG\nrejects VBZ B-VP O\nGerman JJ B-NP B-LOC\n", encoding="utf-8")
    assert run_cli(["score", "heritage-ner", str(pred), "--gold", str(gold), "--json"]) == 0
    strict = json.loads(capsys.readouterr().out)["ner"]["strict"]
    assert (strict["true_positives"], strict["false_positives"], strict["false_negatives"]) == (1, 1, 1)
    assert sorted(strict["per_type"]) == ["LOC", "MISC", "ORG"]
    assert (
        run_cli(["score", "heritage-ner", str(pred), "--gold", str(gold), "--labels", "ORG", "--json"]) == 0
    )
    assert json.loads(capsys.readouterr().out)["ner"]["strict"]["f1"] == 1.0


def test_a_token_tag_file_is_a_declared_kind_of_other_files(tmp_path: Path) -> None:
    from jurist.errors import ConfigError
    from jurist.tasks import Task, get_task

    task = get_task("heritage-ner")
    options = task.options({"tag_mode": "strict"})
    (kind,) = task.other_files(options)
    assert kind.what == "token-tag prediction files" and not kind.several
    assert kind.takes(PRED) and not kind.takes(tmp_path) and not kind.takes(tmp_path / "missing.conll")
    # The contract's score hands the file to the kind: the same scores as the tagger's scoring.
    scores = Task.score(task, PRED, options, gold=GOLD)
    expected = score_tagged_predictions(PRED, GOLD, tags=TagDecoding("strict"))
    assert scores.summary["ner"]["strict"] == expected.summary["ner"]["strict"]
    assert scores.summary["run"]["judge"] == f"token-tag predictions {PRED.name}"
    with pytest.raises(ConfigError, match="needs the gold file"):
        Task.score(task, PRED, options)
    with pytest.raises(ConfigError, match="one of its token-tag prediction files at a time"):
        task.score([PRED, PRED], options, gold=GOLD)


def test_cli_refuses_several_token_tag_files_and_one_without_gold(capsys: pytest.CaptureFixture[str]) -> None:
    from jurist.errors import ExitCode

    assert run_cli(["score", "heritage", str(PRED), str(PRED), "--gold", str(GOLD)]) == ExitCode.BAD_INPUT
    assert "scores one of its token-tag prediction files at a time" in capsys.readouterr().err
    assert run_cli(["score", "heritage", str(PRED)]) == ExitCode.BAD_INPUT
    assert "needs the gold file (--gold)" in capsys.readouterr().err
