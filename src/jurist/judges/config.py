"""The judge configuration: a YAML file validated by a pydantic model.

A config names the judge model and how to call it. API keys never appear in it: LiteLLM
reads the provider's usual variables (``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``, ...), and
``api_key_env`` names another variable for a custom server. Any field can be overridden
from the command line (``--model``, ``--set temperature=0.2``).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Literal
from urllib.parse import unquote, urlsplit

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from jurist.errors import ConfigError
from jurist.redaction import redact
from jurist.safe_load import load_yaml, load_yaml_node, quote

BASELINE = "baseline"

LM15_USERINFO = (
    "api_base holds a user name and password, which the lm15 engine cannot send: use engine auto "
    "or litellm (they send them as HTTP basic auth), or give the server a key through the "
    "variable api_key_env names"
)
"""Why a config with credentials in ``api_base`` and ``engine: lm15`` is refused."""


def split_userinfo(url: str) -> tuple[str, tuple[str, str] | None]:
    """``url`` without the user-info of its address, and the user name and password it held
    (percent-decoded; the password is empty when only a user name is given).

    ``http://user:pass@host:8000/v1`` gives ``("http://host:8000/v1", ("user", "pass"))``; a
    URL without user-info (or that is no URL) is returned as it is, with ``None``.
    """
    try:
        parts = urlsplit(url)
    except ValueError:
        return url, None
    userinfo, at, host = parts.netloc.rpartition("@")
    if not at:
        return url, None
    user, _colon, password = userinfo.partition(":")
    return parts._replace(netloc=host).geturl(), (unquote(user), unquote(password))


class MlflowSettings(BaseModel):
    """Where runs made with a judge config are logged to MLflow (the config's ``mlflow:`` key).

    An empty mapping (``mlflow: {}``) turns logging on with the defaults. The command line
    (``--mlflow-uri``, ``--mlflow-experiment``) and the ``MLFLOW_TRACKING_URI`` /
    ``MLFLOW_EXPERIMENT_NAME`` variables take precedence over these fields.
    """

    model_config = ConfigDict(extra="forbid")

    tracking_uri: str | None = None
    """The MLflow tracking URI (``http://host:5000``, ``sqlite:///mlflow.db``, a directory);
    ``None`` leaves it to ``MLFLOW_TRACKING_URI`` or MLflow's own default."""

    experiment: str | None = None
    """The MLflow experiment to log into; ``None`` means the task's name."""


class Price(BaseModel):
    """What a model costs, in US dollars per million tokens (the config's ``price:`` key).

    For models LiteLLM's price table lacks (a local, vLLM or proxy model), so that
    ``jurist judge --dry-run`` gives a cost, ``--max-cost`` can be kept and each call's
    recorded cost is known. Where given it wins over the table.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    input_per_million: float = Field(ge=0.0, allow_inf_nan=False)
    """Dollars per million prompt (input) tokens."""

    output_per_million: float = Field(ge=0.0, allow_inf_nan=False)
    """Dollars per million completion (output) tokens."""

    def cost(self, prompt_tokens: float, completion_tokens: float) -> float:
        """Dollars for ``prompt_tokens`` and ``completion_tokens``."""
        return (prompt_tokens * self.input_per_million + completion_tokens * self.output_per_million) / 1e6


class JudgeConfig(BaseModel):
    """How to run a judge: which model, through which engine, with which limits."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    model: str = BASELINE
    """A LiteLLM model string (``openai/gpt-4o-mini``, ``anthropic/claude-3-5-haiku-latest``,
    ``ollama_chat/llama3.1``, ``hosted_vllm/qwen2``, ...) or ``baseline`` for the offline
    rule-based judge, which needs no key and no network."""

    engine: Literal["auto", "litellm", "lm15"] = "auto"
    """DSPy's client engine: ``auto`` uses DSPy's built-in HTTP client where it can and
    LiteLLM otherwise; ``litellm`` forces LiteLLM (every LiteLLM provider); ``lm15`` forces
    the built-in client and refuses what it cannot represent."""

    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    """Sampling temperature; 0 makes judgments as repeatable as the provider allows."""

    max_tokens: int | None = Field(default=4000, gt=0)
    """Upper bound on the tokens of one judge answer; ``null`` leaves it to the provider."""

    api_base: str | None = None
    """Base URL of an OpenAI-compatible or self-hosted server, e.g. ``http://localhost:8000/v1``.

    A user name and password in it (``http://user:pass@host/v1``) are sent as HTTP basic
    auth (an ``Authorization: Basic`` header, in place of the key's ``Bearer`` header) by the
    ``auto`` and ``litellm`` engines, and the URL is requested without them; the ``lm15``
    engine cannot send them and the config is refused. They are redacted from everything
    jurist writes and never change :meth:`fingerprint` or the response cache."""

    api_key_env: str | None = None
    """Name of the environment variable that holds the API key, for servers whose key is not
    in the provider's usual variable. The key itself is never written to a config."""

    timeout: float = Field(default=120.0, gt=0)
    """Seconds to wait for one provider response before the call counts as timed out."""

    num_retries: int = Field(default=6, ge=0)
    """Retries of a call that failed with a rate limit, server error, timeout or transport error."""

    retry_max_wait: float = Field(default=30.0, gt=0)
    """Cap in seconds on one wait between retries; Retry-After headers are honoured up to it."""

    parse_retries: int = Field(default=2, ge=0)
    """Extra attempts, bypassing the cache, when the judge's answer cannot be parsed."""

    concurrency: int = Field(default=8, ge=1, le=1024)
    """How many items are judged at once. It is also the ceiling the provider's 429 answers
    back off from: after a 429 the requests in flight for the model halve, then grow back
    by one per window of successes up to this number (``docs/costs.md``)."""

    rpm: int | None = Field(default=None, gt=0, exclude=True)
    """Most requests per minute sent to this model (per ``model`` and ``api_base``, in each
    process), retries included, cached answers not; ``null`` (the default) sets no limit.
    Requests are spaced ``60 / rpm`` seconds apart. Like :attr:`mlflow` it is in no dump of
    the config: it never changes :meth:`fingerprint`, the cache or a run's manifest."""

    tpm: int | None = Field(default=None, gt=0, exclude=True)
    """Most tokens (prompt + completion, as the provider reports them) per minute sent to
    this model, in each process; each request reserves its prompt's estimate before it is
    sent. ``null`` (the default) sets no limit; in no dump of the config, like :attr:`rpm`."""

    cache_dir: Path = Path(".jurist_cache")
    """Directory of DSPy's disk cache of LM responses (relative paths are taken from the
    working directory). Re-running the same judgments reads from it and calls no provider."""

    cache: bool = True
    """Whether to read and write the response cache."""

    logprobs: bool = False
    """Ask the provider for the log-probabilities of the reply's tokens and weigh the verdict
    by them (a task whose judge can be weighed: a YAML task's label, yes/no, score or
    pairwise verdict): the probability of each allowed verdict becomes the item's confidence,
    and a score's expected value is kept beside the sampled one (``docs/logprobs.md``)."""

    top_logprobs: int = Field(default=5, ge=1, le=20)
    """With :attr:`logprobs`: how many alternatives of each token the provider returns (the
    verdicts outside them count as improbable)."""

    adapter: Literal["chat", "json"] = "chat"
    """How DSPy formats prompts and parses answers: ``chat`` (field markers, with one JSON
    fallback) or ``json`` (the answer is a JSON object)."""

    program: Path | None = None
    """Path of a compiled-program artifact (from ``jurist optimize``) to run instead of the
    uncompiled judge."""

    mlflow: MlflowSettings | None = Field(default=None, exclude=True)
    """Log every run made with this config to MLflow (see :class:`MlflowSettings`). It says
    where results are sent, not how the judge answers: it is in no dump of the config, so it
    never changes :meth:`fingerprint`, the response cache, a run's manifest or an artifact."""

    price: Price | None = Field(default=None, exclude=True)
    """The model's price per million tokens (see :class:`Price`), for a model LiteLLM's price
    table lacks; ``null`` (the default) reads the table. It changes what a run is said to
    cost, not what the judge answers: like :attr:`mlflow` it is in no dump of the config, so
    it never changes :meth:`fingerprint`, the response cache or a run's manifest."""

    _source: Path | None = PrivateAttr(default=None)

    @property
    def source(self) -> Path | None:
        """The YAML file this config was read from (``None`` for defaults or a config built in
        code). Error messages name it; it is never part of :meth:`fingerprint` or of any dump,
        so the same judge read from two files is the same judge."""
        return self._source

    def with_source(self, path: str | Path | None) -> JudgeConfig:
        """Record ``path`` as the file this config came from (see :attr:`source`); returns ``self``."""
        self._source = Path(path) if path is not None else None
        return self

    def undumped(self) -> dict[str, Any]:
        """The fields set on this config that no dump holds (:attr:`mlflow`, :attr:`rpm`,
        :attr:`tpm`, :attr:`price`): whoever rebuilds a config from a dump adds them back from here."""
        return {
            name: getattr(self, name)
            for name, info in type(self).model_fields.items()
            if info.exclude and name in self.model_fields_set
        }

    @field_validator("model")
    @classmethod
    def _model_not_empty(cls, value: str) -> str:
        value = value.strip()
        if not value:
            raise ValueError("model must be a LiteLLM model string or 'baseline'")
        if value != BASELINE and value.endswith("/"):
            raise ValueError(f"model {value!r} has a provider prefix but no model name after it")
        return value

    @field_validator("api_base")
    @classmethod
    def _userinfo_needs_basic_auth(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is not None and split_userinfo(value)[1] is not None and info.data.get("engine") == "lm15":
            raise ValueError(LM15_USERINFO)
        return value

    @property
    def api_base_url(self) -> str | None:
        """:attr:`api_base` without a user name and password (the URL that is requested, and
        the one :meth:`fingerprint` and the response cache's key read)."""
        return split_userinfo(self.api_base)[0] if self.api_base is not None else None

    @property
    def basic_auth(self) -> tuple[str, str] | None:
        """The user name and password :attr:`api_base` holds, or ``None``."""
        return split_userinfo(self.api_base)[1] if self.api_base is not None else None

    @property
    def is_baseline(self) -> bool:
        """True when the offline rule-based judge is configured."""
        return self.model == BASELINE

    def fingerprint(self) -> str:
        """A short hash of the fields that change what the judge answers.

        Concurrency, retries, timeouts and the cache location do not change answers, so a run
        may be resumed with other values for them.
        """
        answer_fields = {"model", "temperature", "max_tokens", "api_base", "adapter", "program"}
        data = self.model_dump(mode="json", include=answer_fields)
        data["api_base"] = self.api_base_url  # credentials in the URL do not change answers
        if self.logprobs:  # only when asked: a config without them keeps its fingerprint
            data["logprobs"] = self.top_logprobs
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]


def _field_lines(node: yaml.Node | None) -> dict[str, int]:
    """Map each top-level key of a YAML mapping (its composed root node) to its 1-based line number."""
    if not isinstance(node, yaml.MappingNode):
        return {}
    return {key.value: key.start_mark.line + 1 for key, _ in node.value if isinstance(key, yaml.ScalarNode)}


def _config_error(
    exc: ValidationError, path: Path | None, lines: dict[str, int], overridden: set[str]
) -> ConfigError:
    first = exc.errors()[0]
    field = ".".join(str(part) for part in first["loc"]) or None
    top = str(first["loc"][0]) if first["loc"] else None
    source: Path | str | None = "command-line override" if top in overridden else path
    message = first["msg"]
    if first["type"] == "extra_forbidden":
        message = "unknown field"
        if top and "key" in top.lower():
            message += " (API keys come only from the environment; name the variable in api_key_env)"
    elif "input" in first and first["type"] != "missing":
        message += f" (got {redact(quote(first['input']))})"
    if len(exc.errors()) > 1:
        message += f"; and {len(exc.errors()) - 1} more problem(s)"
    return ConfigError(message, path=source, line=lines.get(top or ""), field=field)


def make_config(
    values: dict[str, Any],
    *,
    path: Path | None = None,
    lines: dict[str, int] | None = None,
    overridden: set[str] | None = None,
) -> JudgeConfig:
    """Validate a mapping into a ``JudgeConfig``; errors name the file (if any) and field."""
    try:
        return JudgeConfig.model_validate(values)
    except ValidationError as exc:
        raise _config_error(exc, path, lines or {}, overridden or set()) from None


def parse_override(assignment: str) -> tuple[str, Any]:
    """Parse a ``FIELD=VALUE`` command-line override; the value is read as YAML (``0.2``, ``null``)."""
    name, sep, raw = assignment.partition("=")
    if not sep or not name.strip():
        raise ConfigError(f"override {assignment!r} is not of the form FIELD=VALUE", field=name or None)
    try:
        value = load_yaml(raw) if raw.strip() else None
    except yaml.YAMLError:
        value = raw
    return name.strip(), value


def load_config(path: str | Path | None = None, overrides: dict[str, Any] | None = None) -> JudgeConfig:
    """Read a judge config from YAML (or start from the defaults) and apply overrides.

    Args:
        path: A YAML file with ``JudgeConfig`` fields; ``None`` (or ``"baseline"`` when no
            file has that name) starts from the defaults: the offline baseline judge.
        overrides: Field values that replace the file's (``None`` values are ignored).

    The file's path is kept on the config (:attr:`JudgeConfig.source`) so that a provider
    error can name the file to fix.

    Raises:
        ConfigError: The file is missing, is not a YAML mapping, or a field is invalid; the
            message names the file, the line and the field.
    """
    values: dict[str, Any] = {}
    lines: dict[str, int] = {}
    file_path = Path(path) if path is not None else None
    if file_path is not None and str(path) == "baseline" and not file_path.exists():
        file_path = None  # `-c baseline`, as calibrate takes it
    if file_path is not None:
        try:
            text = file_path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"cannot read config: {exc.strerror}", path=file_path) from None
        try:
            loaded, root = load_yaml_node(text)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            raise ConfigError(
                f"not valid YAML: {getattr(exc, 'problem', exc)}",
                path=file_path,
                line=mark.line + 1 if mark else None,
            ) from None
        if loaded is None:
            loaded = {}
        if not isinstance(loaded, dict):
            raise ConfigError("a judge config must be a YAML mapping of field: value", path=file_path)
        values.update(loaded)
        lines = _field_lines(root)
    overridden = {name for name, value in (overrides or {}).items() if value is not None}
    for name in overridden:
        values[name] = (overrides or {})[name]
        lines.pop(name, None)
    return make_config(values, path=file_path, lines=lines, overridden=overridden).with_source(file_path)
