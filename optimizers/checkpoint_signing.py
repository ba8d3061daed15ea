"""Signing an optimiser's checkpoint folder, so a resume never unpickles a file this installation did not write.

GEPA keeps its state as a pickle (``gepa/gepa_state.bin``), and unpickling runs code. Run folders get shared and
downloaded, so after every compile (finished or interrupted) each checkpoint file's HMAC-SHA256 goes into
``manifest.hmac.json`` beside it, keyed by a secret that never leaves this machine (``~/.config/askfirst/
checkpoint.key``, or ``$ASKFIRST_CONFIG_DIR/checkpoint.key``). A resume checks every file before the optimiser
reads any of them, and refuses, saying which file and why, when one does not match.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from pathlib import Path

from askfirst.datasets.errors import DataError

MANIFEST = "manifest.hmac.json"


class CheckpointTrustError(DataError):
    """A checkpoint file that this installation did not write (or that changed since)."""


def _key() -> bytes:
    root = Path(os.environ.get("ASKFIRST_CONFIG_DIR") or Path.home() / ".config" / "askfirst").expanduser()
    path = root / "checkpoint.key"
    if not path.is_file():
        root.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(secrets.token_hex(32))
    return bytes.fromhex(path.read_text().strip())


def _digest(key: bytes, file: Path) -> str:
    mac = hmac.new(key, digestmod=hashlib.sha256)
    with file.open("rb") as handle:
        while block := handle.read(1 << 20):
            mac.update(block)
    return mac.hexdigest()


def _files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file() and p.name != MANIFEST)


def sign_checkpoints(folder: Path) -> None:
    """Record the HMAC of every file in ``folder`` (nothing to do when it does not exist)."""
    if not folder.is_dir():
        return
    key = _key()
    manifest = {p.relative_to(folder).as_posix(): _digest(key, p) for p in _files(folder)}
    tmp = folder / f".{MANIFEST}.tmp"
    tmp.write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    os.replace(tmp, folder / MANIFEST)


def verify_checkpoints(folder: Path) -> None:
    """Check every file in ``folder`` against its manifest before anything in it is loaded.

    Raises:
        CheckpointTrustError: A file is missing from the manifest or does not match it (the message names it).
    """
    files = _files(folder) if folder.is_dir() else []
    if not files:
        return
    how = (f"If you wrote this run yourself elsewhere, delete {folder} to restart the optimisation from its seed "
           "(the LM calls it already made come from the DSPy cache).")
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise CheckpointTrustError(f"{folder} has no valid {MANIFEST}, so its pickled checkpoint was not written by this "
                                   f"installation (or the run was killed before it was signed); refusing to load it. {how}") from None
    key = _key()
    for file in files:
        name = file.relative_to(folder).as_posix()
        if not hmac.compare_digest(str(manifest.get(name, "")), _digest(key, file)):
            raise CheckpointTrustError(f"{file} was not written by this installation, or changed since; refusing to unpickle it. {how}")
