"""A jury file where a command takes a judge config: ``jurist judge TASK DATA --config jury.yaml``.

The shared judge options (``--config``, ``--model``, ``--set``, ...) merge into one
:class:`~jurist.judges.config.JudgeConfig` before a command runs, and a jury file is no judge
config. :func:`accepts_jury_file` wraps such a command: when ``--config`` names a jury file, the
command receives it as ``jury_file`` and its judge config holds only the command line's
overrides (:func:`overrides_of`), which apply to every juror.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:  # the command line's options are defined without loading the config models
    from jurist.judges.config import JudgeConfig

__all__ = ["accepts_jury_file", "overrides_of"]

R = TypeVar("R")


def accepts_jury_file(command: Callable[..., R]) -> Callable[..., R]:
    """Let a command with the shared judge options take a jury file as ``--config``.

    Put it above ``with_judge_options``; the command declares ``jury_file: Path | None = None``,
    which the command line does not show. A cascade file (``cascade:``) arrives there too.
    """
    signature = inspect.signature(command)
    shown = [param for name, param in signature.parameters.items() if name != "jury_file"]

    @functools.wraps(command)
    def wrapper(**kwargs: Any) -> R:
        from jurist.jury.cascade_config import is_cascade_file
        from jurist.jury.config import is_jury_file

        config = kwargs.get("config")
        kwargs["jury_file"] = None
        if config is not None and (is_jury_file(config) or is_cascade_file(config)):
            kwargs["jury_file"], kwargs["config"] = Path(config), None
        return command(**kwargs)

    wrapper.__signature__ = signature.replace(parameters=shown)  # type: ignore[attr-defined]
    wrapper.__annotations__ = {param.name: param.annotation for param in shown}
    del wrapper.__wrapped__  # type: ignore[attr-defined]
    return wrapper


def overrides_of(config: JudgeConfig) -> dict[str, Any]:
    """The fields the command line set on a judge config (``--concurrency 4`` -> ``{"concurrency": 4}``)."""
    return {**config.model_dump(include=set(config.model_fields_set)), **config.undumped()}
