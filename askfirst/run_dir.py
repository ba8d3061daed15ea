"""Run folders: ``runs/<kind>-<UTC time>-<short id>/`` holding the resolved config and every output."""

from __future__ import annotations

import secrets
import time
from pathlib import Path

from askfirst.config import AskFirstConfig, save_resolved


def new_run_dir(config: AskFirstConfig, kind: str) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    run_dir = config.runs_path / f"{kind}-{stamp}-{secrets.token_hex(3)}"
    save_resolved(config, run_dir)
    return run_dir
