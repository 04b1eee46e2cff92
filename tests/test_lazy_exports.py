"""Packages that import their exports on first use (:mod:`jurist._lazy`): ``__all__`` is the
``if TYPE_CHECKING:`` imports, and each name resolves to the object its module defines."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from jurist._lazy import type_checking_imports

SRC = Path(__file__).resolve().parents[1] / "src"
LAZY = sorted(
    ".".join(path.parent.relative_to(SRC).parts)
    for path in SRC.glob("jurist/**/__init__.py")
    if "lazy_exports(__name__)" in path.read_text(encoding="utf-8")
)


def test_the_lazy_packages_are_found() -> None:
    assert {
        "jurist",
        "jurist.tasks",
        "jurist.tasks.gates",
        "jurist.jury",
        "jurist.optimization",
        "jurist.verbs",
    } <= set(LAZY)


@pytest.mark.parametrize("package", LAZY)
def test_every_export_resolves_to_its_modules_object(package: str) -> None:
    module = importlib.import_module(package)
    exports = type_checking_imports(Path(str(module.__file__)).read_text(encoding="utf-8"))
    defined_here = {name for name in module.__all__ if name in vars(module) and name not in exports}
    assert set(exports) | defined_here == set(module.__all__)
    assert set(module.__all__) <= set(dir(module))
    for name, (source, attribute) in exports.items():
        assert getattr(module, name) is getattr(importlib.import_module(source), attribute), name


def test_an_unknown_name_is_an_attribute_error() -> None:
    import jurist.tasks

    with pytest.raises(AttributeError, match="jurist.tasks.*no_such_name"):
        _ = jurist.tasks.no_such_name


def test_only_plain_imports_are_read() -> None:
    source = "if TYPE_CHECKING:\n    from a.b import c, d as e\n"
    assert type_checking_imports(source) == {"c": ("a.b", "c"), "e": ("a.b", "d")}
    with pytest.raises(ValueError, match="line 2"):
        type_checking_imports("if TYPE_CHECKING:\n    import a\n")
