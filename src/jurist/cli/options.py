"""Command-line options shared by every judging command, and their merge into a JudgeConfig.

Defining the options loads nothing but Typer: the config model is imported when a command runs.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

if TYPE_CHECKING:
    from jurist.judges.config import JudgeConfig

R = TypeVar("R")

ConfigOpt = Annotated[
    Path | None,
    typer.Option("--config", "-c", help="Judge config YAML (default: the offline baseline judge)."),
]
ModelOpt = Annotated[
    str | None, typer.Option(help="LiteLLM model string, or 'baseline'. Overrides the config.")
]
ConcurrencyOpt = Annotated[int | None, typer.Option(help="Items judged at once. Overrides the config.")]
TemperatureOpt = Annotated[float | None, typer.Option(help="Sampling temperature. Overrides the config.")]
ApiBaseOpt = Annotated[str | None, typer.Option(help="Base URL of the model server. Overrides the config.")]
EngineOpt = Annotated[str | None, typer.Option(help="auto, litellm or lm15. Overrides the config.")]
AdapterOpt = Annotated[str | None, typer.Option(help="chat or json. Overrides the config.")]
CacheDirOpt = Annotated[Path | None, typer.Option(help="Response cache directory. Overrides the config.")]
ProgramOpt = Annotated[Path | None, typer.Option(help="Compiled program to run. Overrides the config.")]
SetOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--set", help="Override any config field: --set FIELD=VALUE (repeatable; VALUE read as YAML)."
    ),
]


def judge_config(
    config: Path | None,
    *,
    model: str | None = None,
    concurrency: int | None = None,
    temperature: float | None = None,
    api_base: str | None = None,
    engine: str | None = None,
    adapter: str | None = None,
    cache_dir: Path | None = None,
    program: Path | None = None,
    sets: list[str] | None = None,
) -> JudgeConfig:
    """Load the config file (if any) and apply the command line's overrides, named options last."""
    from jurist.judges.config import load_config, parse_override

    overrides: dict[str, Any] = dict(parse_override(item) for item in sets or [])
    named = {
        "model": model,
        "concurrency": concurrency,
        "temperature": temperature,
        "api_base": api_base,
        "engine": engine,
        "adapter": adapter,
        "cache_dir": cache_dir,
        "program": program,
    }
    overrides.update({name: value for name, value in named.items() if value is not None})
    return load_config(config, overrides)


_SHARED_OPTIONS: dict[str, Any] = {
    "config": ConfigOpt,
    "model": ModelOpt,
    "concurrency": ConcurrencyOpt,
    "temperature": TemperatureOpt,
    "api_base": ApiBaseOpt,
    "engine": EngineOpt,
    "adapter": AdapterOpt,
    "cache_dir": CacheDirOpt,
    "program": ProgramOpt,
    "set_": SetOpt,
}


def _evaluated(annotation: Any, command: Callable[..., Any]) -> Any:
    """An annotation as an object: a string one (``from __future__ import annotations``) is
    evaluated in the command's module, as ``inspect.signature(..., eval_str=True)`` does."""
    if not isinstance(annotation, str):
        return annotation
    return eval(annotation, getattr(command, "__globals__", {}))  # noqa: S307  (the module's own annotation)


def with_judge_options(
    *, target: str = "judge", exclude: tuple[str, ...] = ()
) -> Callable[[Callable[..., R]], Callable[..., R]]:
    """Give a Typer command the shared judge options (``--config``, ``--model``, ...).

    The decorated command declares a parameter named ``target`` instead of the options and
    receives there the :class:`JudgeConfig` they describe (:func:`judge_config`). The
    target's annotation is never evaluated, so its module may import ``JudgeConfig`` for
    type checking only.

    Args:
        target: The command's parameter that receives the merged config.
        exclude: Shared options the command does not offer (e.g. ``program``).
    """
    names = [name for name in _SHARED_OPTIONS if name not in exclude]

    def decorate(command: Callable[..., R]) -> Callable[..., R]:
        signature = inspect.signature(command)
        own = [
            param.replace(annotation=_evaluated(param.annotation, command))
            for name, param in signature.parameters.items()
            if name != target
        ]
        shared = [
            inspect.Parameter(
                name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=_SHARED_OPTIONS[name]
            )
            for name in names
        ]

        @functools.wraps(command)
        def wrapper(**kwargs: Any) -> R:
            values = {name: kwargs.pop(name) for name in names}
            kwargs[target] = judge_config(values.pop("config"), sets=values.pop("set_"), **values)
            return command(**kwargs)

        parameters = [*own, *shared]
        wrapper.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
        wrapper.__annotations__ = {param.name: param.annotation for param in parameters}
        del wrapper.__wrapped__  # type: ignore[attr-defined]
        return wrapper

    return decorate
