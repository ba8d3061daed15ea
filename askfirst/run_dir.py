"""Run folders: ``runs/<kind>-<UTC time>-<short id>/`` holding the resolved config and every output."""

from __future__ import annotations

import os
import secrets
import tempfile
import time
from pathlib import Path

from askfirst.config import AskFirstConfig


def new_run_dir(config: AskFirstConfig, kind: str) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    run_dir = config.runs_path / f"{kind}-{stamp}-{secrets.token_hex(3)}"
    save_resolved(config, run_dir)
    return run_dir


def _process_umask() -> int:
    mask = os.umask(0)  # reading the umask means setting it: done once, at import, before any thread writes
    os.umask(mask)
    return mask


# A run folder's files get the mode any other file the user writes gets: mkstemp's temporary file is owner-only,
# which left config.yaml and metrics.json unreadable to the rest of a shared server's group.
FILE_MODE = 0o666 & ~_process_umask()


def write_atomic(path: Path, text: str) -> Path:
    """Write ``text`` to ``path`` through a temporary file and a rename, so the file is never seen half-written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, FILE_MODE)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def save_resolved(config: AskFirstConfig, run_dir: Path) -> Path:
    """Write the fully resolved config next to a run's outputs, for reproduction."""
    return write_atomic(run_dir / "config.yaml", config.to_yaml())
