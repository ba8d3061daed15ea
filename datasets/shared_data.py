"""Where the shared benchmark data lives (never copied into the project)."""

from __future__ import annotations

import os
from pathlib import Path

# Relative to the working directory, not to this file: an installed (non-editable) askfirst lives in
# site-packages, where a path beside the source would point nowhere.
DEFAULT_SHARED_DATA = Path("..") / "shared" / "data"


def shared_data_dir(configured: str | None = None) -> Path:
    """``ASKFIRST_DATA_DIR``, else the configured ``data.shared_data_dir``, else ``../shared/data`` from the working directory."""
    return Path(os.environ.get("ASKFIRST_DATA_DIR") or configured or DEFAULT_SHARED_DATA).expanduser().resolve()
