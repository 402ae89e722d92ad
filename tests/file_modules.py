"""A Python file that is not importable by name (a script of ``scripts/``, a test module: the
suite imports test modules by path) loaded as a module of its own."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType


def load_file(path: Path, name: str) -> ModuleType:
    """The module ``path`` defines, executed once more under ``name``."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
