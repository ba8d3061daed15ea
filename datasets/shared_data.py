"""Where the shared benchmark data lives (never copied into the project)."""

from __future__ import annotations

import os
from pathlib import Path

_DEFAULT = Path(__file__).resolve().parent.parent.parent / "shared" / "data"


def shared_data_dir(configured: str | None = None) -> Path:
    """``ASKFIRST_DATA_DIR``, else the configured path, else ``../shared/data`` beside the checkout."""
    return Path(os.environ.get("ASKFIRST_DATA_DIR") or configured or _DEFAULT).expanduser()
