"""Names that become folders: a collection name is a name, and nothing is written or deleted outside its root."""

from __future__ import annotations

import re
from pathlib import Path

COLLECTION_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_-]{0,127}")


class UnsafePathError(ValueError):
    """A name that would reach outside the folder it is meant to live in."""


def check_collection_name(name: str) -> str:
    """``name`` if it is a collection name: letters, digits, ``_`` and ``-`` (128 at most, no separators or dots).

    Raises:
        UnsafePathError: It is not; a collection name becomes a folder under the store's root.
    """
    if not isinstance(name, str) or not COLLECTION_NAME.fullmatch(name):
        raise UnsafePathError(f"collection name {name!r} must be letters, digits, '_' and '-' only (at most 128, "
                              "not starting with '-'): it names a folder inside the store")
    return name


def inside(root: Path, name: str) -> Path:
    """``root / name``, checked to be a direct child of ``root`` once both are resolved (links followed).

    Raises:
        UnsafePathError: ``name`` is empty, ``.``, ``..``, holds a separator, or resolves elsewhere.
    """
    root = Path(root)
    child = root / name
    if name in ("", ".", "..") or Path(name).name != name or child.resolve().parent != root.resolve():
        raise UnsafePathError(f"{name!r} would leave the folder {root}")
    return child
