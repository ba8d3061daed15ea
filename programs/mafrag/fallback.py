"""MAF-RAG's last phase: a search outside the collection (the paper searched the internet), behind a small interface."""

from __future__ import annotations

import importlib
from collections.abc import Callable

from askfirst.config import ConfigError
from askfirst.retrieval.chunking import Passage

FallbackSearch = Callable[[str, int], list[Passage]]
"""``search(query, k) -> passages``: what a web search (or any other outside source) plugs in as."""


def load_fallback(spec: str | None) -> FallbackSearch | None:
    """The function ``mafrag.fallback_search`` names (``module:function``), or ``None`` when it is unset.

    Raises:
        ConfigError: The name is malformed, or the module or function cannot be found.
    """
    if not spec:
        return None
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise ConfigError(f"mafrag.fallback_search {spec!r} must look like module:function")
    try:
        found = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"mafrag.fallback_search {spec!r}: {exc}") from None
    if not callable(found):
        raise ConfigError(f"mafrag.fallback_search {spec!r} is not callable")
    return found
