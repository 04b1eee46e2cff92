from pathlib import Path

import pytest

from jurist.errors import ConfigError
from jurist.judges.config import JudgeConfig, load_config, parse_override


def test_defaults_are_the_offline_baseline():
    config = load_config(None)
    assert config.is_baseline
    assert config.temperature == 0.0


def test_yaml_file_and_overrides(tmp_path: Path):
    path = tmp_path / "judge.yaml"
    path.write_text("model: openai/gpt-4o-mini\nconcurrency: 16\ntemperature: 0.1\n")
    config = load_config(path, {"concurrency": 4, "model": None})
    assert config.model == "openai/gpt-4o-mini"
    assert config.concurrency == 4
    assert config.temperature == 0.1


def test_bad_field_names_file_line_and_field(tmp_path: Path):
    path = tmp_path / "judge.yaml"
    path.write_text("model: openai/x\n\ntemperature: hot\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    error = info.value
    assert error.path == str(path)
    assert error.field == "temperature"
    assert error.line == 3
    assert "judge.yaml, line 3, field 'temperature'" in str(error)


def test_unknown_field_rejected_and_keys_pointed_to_environment(tmp_path: Path):
    path = tmp_path / "judge.yaml"
    path.write_text("model: openai/x\napi_key: abc\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert info.value.field == "api_key"
    assert "environment" in str(info.value)


def test_bad_override_is_named_as_command_line(tmp_path: Path):
    with pytest.raises(ConfigError) as info:
        load_config(None, dict([parse_override("concurrency=0")]))
    assert info.value.field == "concurrency"
    assert "command-line override" in str(info.value)


def test_override_values_are_read_as_yaml():
    assert parse_override("max_tokens=null") == ("max_tokens", None)
    assert parse_override("temperature=0.5") == ("temperature", 0.5)
    with pytest.raises(ConfigError):
        parse_override("no-equals-sign")


def test_not_a_mapping_and_bad_yaml(tmp_path: Path):
    path = tmp_path / "list.yaml"
    path.write_text("- a\n- b\n")
    with pytest.raises(ConfigError, match="mapping"):
        load_config(path)
    path.write_text("model: [unclosed\n")
    with pytest.raises(ConfigError, match="YAML") as info:
        load_config(path)
    assert info.value.line is not None


def test_fingerprint_ignores_operational_fields():
    a = JudgeConfig(model="openai/x", concurrency=2, num_retries=1)
    b = JudgeConfig(model="openai/x", concurrency=32, num_retries=9)
    c = JudgeConfig(model="openai/x", temperature=0.7)
    assert a.fingerprint() == b.fingerprint()
    assert a.fingerprint() != c.fingerprint()


def test_shipped_example_configs_validate():
    """Every judge config in configs/ loads; a jury file there is a jury whose jurors load."""
    from jurist.jury import is_jury_file, load_jury

    configs = Path(__file__).resolve().parents[2] / "configs"
    files = sorted(configs.glob("*.yaml"))
    assert len(files) >= 5
    for file in files:
        if is_jury_file(file):
            assert len(load_jury(file).jurors) >= 2
        else:
            load_config(file)
