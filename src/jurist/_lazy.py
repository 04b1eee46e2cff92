"""A package's public names, imported from their modules on first use (PEP 562).

A package whose modules import DSPy, LiteLLM or pandas writes its exports as usual, imports
and ``__all__``, but puts the imports under ``if TYPE_CHECKING:`` and ends with::

    __getattr__, __dir__ = lazy_exports(__name__)

Importing the package, or one light module inside it, then runs none of the heavy ones
(``jurist --help`` and ``jurist gate`` never load DSPy). Type checkers and linters read the
imports as imports; at run time the first use of a name (``package.name`` or ``from package
import name``) reads the package's ``if TYPE_CHECKING:`` block once and imports the name
from the module it names there. The block holds ``from MODULE import NAME [as ALIAS]``
statements only, with absolute module names.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Callable
from importlib import import_module
from pathlib import Path
from typing import Any

__all__ = ["lazy_exports", "type_checking_imports"]


def type_checking_imports(source: str) -> dict[str, tuple[str, str]]:
    """The names imported under ``if TYPE_CHECKING:`` in a module's source.

    Returns:
        Name bound -> (module, attribute imported under that name).

    Raises:
        ValueError: The block holds something other than absolute ``from ... import ...``.
    """
    found: dict[str, tuple[str, str]] = {}
    for node in ast.parse(source).body:
        if not (isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"):
            continue
        for statement in node.body:
            if not (isinstance(statement, ast.ImportFrom) and statement.module and not statement.level):
                raise ValueError(f"line {statement.lineno}: only `from MODULE import NAME` is allowed here")
            for alias in statement.names:
                found[alias.asname or alias.name] = (statement.module, alias.name)
    return found


def lazy_exports(package: str) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module-level ``__getattr__`` and ``__dir__`` of ``package``: its ``TYPE_CHECKING``
    imports, each imported on first use and then set on the package (later uses are plain
    attribute reads).

    Args:
        package: The package's ``__name__``; call this at the end of its ``__init__``.
    """
    module = sys.modules[package]
    exports: dict[str, tuple[str, str]] = {}

    def _exports() -> dict[str, tuple[str, str]]:
        if not exports:
            exports.update(type_checking_imports(Path(str(module.__file__)).read_text(encoding="utf-8")))
        return exports

    def __getattr__(name: str) -> Any:
        target = _exports().get(name)
        if target is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(target[0]), target[1])
        setattr(module, name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(module), *_exports()})

    return __getattr__, __dir__
