"""Reading YAML task files: every malformed key is a ConfigError naming the file, line and key."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from jurist import verbs
from jurist.errors import ConfigError, InputError
from jurist.tasks.declarative import load_task_file
from jurist.tasks.declarative.verdicts import check_verdict, parse_gold
from support import run_cli

GOOD = """\
name: helpfulness
instructions: Rate the answer.
inputs:
  question: prompt
  answer: response
output:
  kind: score
  range: [1, 5]
gold: human
baseline:
  rules: [{pattern: "(?i)i don't know", value: 1}]
  default: 3
"""


def write(tmp_path: Path, text: str, name: str = "task.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def error_of(tmp_path: Path, text: str) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        load_task_file(write(tmp_path, text))
    return caught.value


def test_a_good_file_loads(tmp_path):
    task = load_task_file(write(tmp_path, GOOD))
    assert task.name == "helpfulness"
    assert task.source.endswith("task.yaml")
    assert set(task.verbs) == {"judge", "score", "calibrate", "optimize", "prompt", "label"}
    assert task.describe()["inputs"] == {
        "question": "data column 'prompt'",
        "answer": "data column 'response'",
    }


@pytest.mark.parametrize(
    ("text", "field", "line", "words"),
    [
        (GOOD.replace("kind: score", "kind: stars"), "output.kind", 7, "label"),
        (GOOD.replace("  range: [1, 5]\n", ""), "output.range", None, "range"),
        (GOOD.replace("range: [1, 5]", "range: [5, 1]"), "output.range", 8, "low < high"),
        (GOOD.replace("gold: human", "gold: human\ncolour: red"), "colour", 10, "unknown key"),
        (GOOD.replace("name: helpfulness\n", ""), "name", None, "missing"),
        (GOOD.replace("value: 1}", "value: 9}"), "baseline.rules.0.value", 11, "outside the range"),
        (
            GOOD.replace('"(?i)i don\'t know"', '"(unclosed"'),
            "baseline.rules.0.pattern",
            11,
            "regular expression",
        ),
        (GOOD.replace("default: 3", "default: high"), "baseline.default", 12, "integer"),
        (GOOD.replace("  answer: response\n", "  verdict: response\n"), "inputs.verdict", 5, "reserved"),
        (
            GOOD.replace("kind: score", "kind: pairwise").replace("  range: [1, 5]\n", ""),
            "inputs",
            3,
            "response_a",
        ),
        (GOOD.replace("range: [1, 5]", "range: [1, 5]\n  labels: [a, b]"), "output.labels", 9, "labels"),
        (GOOD + "examples: demos.jsonl\n", None, None, "examples file not found"),
    ],
)
def test_each_bad_key_is_named(tmp_path, text, field, line, words):
    if words == "examples file not found":
        task = load_task_file(write(tmp_path, text))
        with pytest.raises(ConfigError, match=words) as caught:
            task.program(task.options())
        assert caught.value.field == "examples"
        return
    error = error_of(tmp_path, text)
    assert error.field == field
    assert error.path is not None and error.path.endswith("task.yaml")
    if line is not None:
        assert error.line == line
    assert words in str(error)


def test_not_yaml_and_missing_file(tmp_path):
    error = error_of(tmp_path, "name: [unclosed\n")
    assert "not valid YAML" in str(error) and error.line is not None
    with pytest.raises(ConfigError, match="not found"):
        load_task_file(tmp_path / "nope.yaml")
    assert "mapping" in str(error_of(tmp_path, "- a list\n"))


def test_the_registry_reads_a_task_file_by_path(tmp_path):
    path = write(tmp_path, GOOD)
    from jurist.tasks._registry import get_task

    assert get_task(str(path)).name == "helpfulness"


def test_missing_input_column_names_file_line_and_field(tmp_path):
    task = write(tmp_path, GOOD)
    data = tmp_path / "data.jsonl"
    data.write_text('{"prompt": "q", "response": "a"}\n{"prompt": "q2"}\n', encoding="utf-8")
    with pytest.raises(InputError) as caught:
        verbs.judge(task, data, out=tmp_path / "run", progress=False)
    assert caught.value.line == 2 and caught.value.field == "response" and str(data) in str(caught.value)


def test_a_bad_gold_value_names_its_row(tmp_path):
    task = write(tmp_path, GOOD)
    data = tmp_path / "data.csv"
    data.write_text("prompt,response,human\nq,a,4\nq2,b,seven\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        verbs.judge(task, data, out=tmp_path / "run", progress=False)
    assert caught.value.line == 3 and caught.value.field == "human"


def test_a_task_without_baseline_asks_for_a_config(tmp_path):
    task = write(tmp_path, GOOD.split("baseline:")[0])
    data = tmp_path / "data.jsonl"
    data.write_text('{"prompt": "q", "response": "a", "human": 3}\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="--config") as caught:
        verbs.judge(task, data, out=tmp_path / "run", progress=False)
    assert "no offline baseline" in str(caught.value)


def test_verdicts_are_validated_never_coerced(tmp_path):
    output = load_task_file(write(tmp_path, GOOD)).spec.output
    assert check_verdict(output, 5) == 5
    for bad in (6, 0, 3.0, "3", True):
        with pytest.raises(ValueError):
            check_verdict(output, bad)
    assert parse_gold(output, "4") == 4
    assert parse_gold(output, "") is None


LABELS_TASK = """\
name: topics
instructions: Tag the text.
inputs: [text]
output:
  kind: labels
  labels: [sport, money]
gold: tags
baseline:
  rules:
    - {pattern: "goal", value: [sport]}
    - {pattern: "bank", value: [money, sport]}
  default: []
"""


def test_multi_label_task_offline_by_hand(tmp_path):
    task = write(tmp_path, LABELS_TASK)
    data = tmp_path / "tags.csv"
    data.write_text(
        'text,tags\na goal,sport\nthe bank,money\nnothing,\n"goal, bank","sport,money"\n', encoding="utf-8"
    )
    run = verbs.judge(task, data, out=tmp_path / "run", progress=False)
    figures = run.summary["agreement"]
    # judged: {sport}, {money, sport}, {} (no gold), {sport}; gold: {sport}, {money}, -, {sport, money}
    # tp: sport 2, money 1; fp: sport 1; fn: money 1 -> micro F1 = 6 / (6 + 1 + 1)
    assert run.summary["gold"]["scored"] == 3
    assert figures["micro_f1"] == pytest.approx(6 / 8)
    assert figures["exact_match"] == pytest.approx(1 / 3)
    assert figures["per_label"]["sport"]["precision"] == pytest.approx(2 / 3)


YES_NO_TASK = """\
name: answered
instructions: Does the reply answer the question?
inputs: [question, reply]
output:
  kind: label
  labels: [yes, no, partly]
gold: human
examples:
  - {question: Is it open, reply: yes, human: yes}
baseline:
  rules:
    - {pattern: "(?i)no idea", value: no}
    - {pattern: "(?i)maybe", value: partly}
  default: yes
"""


def test_yes_and_no_written_unquoted_stay_the_words_typed(tmp_path):
    """YAML 1.1 reads unquoted yes/no/on/off as booleans; in labels, rule values, the default
    and inline examples of a label task they mean the words the user typed."""
    path = write(tmp_path, YES_NO_TASK)
    spec = load_task_file(path).spec
    assert spec.output.labels == ["yes", "no", "partly"]
    assert [rule.value for rule in spec.baseline.rules] == ["no", "partly"]
    assert spec.baseline.default == "yes"
    assert spec.examples == [{"question": "Is it open", "reply": "yes", "human": "yes"}]
    data = tmp_path / "replies.csv"
    data.write_text(
        "question,reply,human\nOpen?,Yes it is,yes\nWhen?,no idea,no\nWhy?,maybe later,yes\n",
        encoding="utf-8",
    )
    run = verbs.judge(path, data, out=tmp_path / "run", progress=False)
    assert list(run["verdict"]) == ["yes", "no", "partly"]
    assert run.summary["gold"]["scored"] == 3
    assert run.summary["agreement"]["accuracy"] == pytest.approx(2 / 3)


def test_yes_and_no_stay_booleans_for_a_yes_no_task(tmp_path):
    """For a bool task, the same unquoted words are its verdicts true and false; a quoted
    'yes' in labels stays text too."""
    text = YES_NO_TASK.replace("  kind: label\n  labels: [yes, no, partly]\n", "  kind: bool\n")
    text = text.replace('    - {pattern: "(?i)maybe", value: partly}\n', "")
    spec = load_task_file(write(tmp_path, text)).spec
    assert [rule.value for rule in spec.baseline.rules] == [False]
    assert spec.baseline.default is True
    quoted = load_task_file(
        write(tmp_path, YES_NO_TASK.replace("[yes, no, partly]", "['yes', 'no', partly]"), "q.yaml")
    )
    assert quoted.spec.output.labels == ["yes", "no", "partly"]


def test_every_bad_gold_value_is_reported_at_once(tmp_path):
    task = write(tmp_path, GOOD)
    data = tmp_path / "data.csv"
    data.write_text(
        "prompt,response,human\nq,a,4\nq2,b,seven\nq3,c,3\nq4,d,9\nq5,e,\nq6,f,x\n", encoding="utf-8"
    )
    with pytest.raises(InputError) as caught:
        verbs.judge(task, data, out=tmp_path / "run", progress=False)
    message = str(caught.value)
    assert caught.value.line == 3 and caught.value.field == "human"
    assert "3 rows have a bad gold value" in message
    assert "line 5: expected a number from 1 to 5, got '9'" in message and "line 7:" in message
    assert not (tmp_path / "run").exists()


def test_a_gold_column_no_row_has_is_an_error_listing_the_columns(tmp_path, capsys):
    """A misspelt `gold:` column stops judge and score (exit 2) naming the columns there are;
    `--no-gold` judges anyway, with no agreement figures; nothing is left behind."""
    task = write(tmp_path, GOOD.replace("gold: human", "gold: humn"))
    data = tmp_path / "data.csv"
    data.write_text("prompt,response,human\nq,a,4\nq2,I don't know,1\n", encoding="utf-8")
    out = tmp_path / "run"
    assert run_cli(["judge", str(task), str(data), "--out", str(out), "--no-progress"]) == 2
    error = capsys.readouterr().err
    assert "gold column 'humn'" in error and "prompt, response, human" in error and "--no-gold" in error
    assert not out.exists()
    assert run_cli(["judge", str(task), str(data), "--out", str(out), "--no-progress", "--no-gold"]) == 0
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert "agreement" not in summary and summary["ok"] == 2
    capsys.readouterr()
    assert run_cli(["score", str(task), str(out), "--gold", str(data)]) == 2
    assert "gold column 'humn'" in capsys.readouterr().err


def test_gold_labels_differing_only_in_case_or_space_are_read_and_counted(tmp_path):
    task = write(tmp_path, YES_NO_TASK)
    data = tmp_path / "replies.csv"
    data.write_text(
        'question,reply,human\nOpen?,Yes it is,"  Yes "\nWhen?,no idea,NO\nWhy?,maybe later,partly\n',
        encoding="utf-8",
    )
    run = verbs.judge(task, data, out=tmp_path / "run", progress=False)
    assert run.summary["gold"]["normalised"] == 2
    assert run.summary["agreement"]["accuracy"] == pytest.approx(1.0)
    assert list(run["gold"]) == ["yes", "no", "partly"]
