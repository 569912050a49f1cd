"""The ``NamedTuple`` base of the modules on ``log``'s start-up path builds what
``collections.namedtuple`` builds; its first instance is bound by a plain function,
the later ones by the compiled ``__new__``: the same either way."""

from __future__ import annotations

import copy
import pickle
import typing
from collections import namedtuple

import pytest

from soloqueue_mem.tuples import NamedTuple


class Point(NamedTuple):
    """A point."""

    x: int
    y: str | None = None
    tags: tuple[str, ...] = ()

    @property
    def doubled(self) -> int:
        return self.x * 2

    def label(self) -> str:
        return f"{self.x}/{self.y}"


def fresh(made: int) -> type:
    """A new class like Point (``None``: collections.namedtuple's), ``made`` instances
    already made."""
    if made is None:
        return namedtuple("Point", ["x", "y", "tags"], defaults=(None, ()))

    class Point(NamedTuple):
        x: int
        y: str | None = None
        tags: tuple[str, ...] = ()

    for _ in range(made):
        Point(0)
    return Point


CALLS = [
    ((1,), {}),
    ((1, "b"), {}),
    ((1,), {"tags": ("a",)}),
    ((), {"x": 1, "y": "b"}),
    ((1, "b", ("a",)), {}),
    ((), {}),
    ((1,), {"x": 2}),
    ((1,), {"z": 2}),
    ((1, 2, 3, 4), {}),
    ((), {"y": "b"}),
]


def outcome(cls: type, args: tuple, kwargs: dict) -> object:
    try:
        return tuple(cls(*args, **kwargs))
    except TypeError:
        return TypeError


@pytest.mark.parametrize("made", [0, 1, 2])
@pytest.mark.parametrize(("args", "kwargs"), CALLS)
def test_a_call_binds_as_collections_namedtuple(made, args, kwargs):
    assert outcome(fresh(made), args, kwargs) == outcome(fresh(None), args, kwargs)


@pytest.mark.parametrize("made", [None, 0, 3])
def test_the_methods_and_attributes_are_namedtuples(made):
    cls = fresh(made)
    p = cls(1, tags=("a",))
    assert repr(p) == "Point(x=1, y=None, tags=('a',))"
    assert p.x == 1 and p[2] == ("a",) and isinstance(p, tuple)
    assert p._asdict() == {"x": 1, "y": None, "tags": ("a",)}
    assert p._replace(y="b") == (1, "b", ("a",)) and type(p._replace()) is cls
    assert cls._make([1, 2, 3]) == (1, 2, 3)
    assert cls._fields == ("x", "y", "tags") == cls.__match_args__
    assert cls._field_defaults == {"y": None, "tags": ()}
    assert copy.deepcopy(p) == p and copy.copy(p) == p
    with pytest.raises(TypeError):
        cls._make([1])
    with pytest.raises(ValueError):
        p._replace(z=1)


def test_the_class_body_is_kept():
    p = Point(2, "b")
    assert p.doubled == 4 and p.label() == "2/b"
    assert Point.__doc__ == "A point." and Point.__qualname__ == "Point"
    assert Point.__module__ == __name__
    assert pickle.loads(pickle.dumps(p)) == p
    assert typing.get_type_hints(Point) == {"x": int, "y": str | None, "tags": tuple[str, ...]}
    match Point(3, "c"):
        case Point(x, y):
            assert (x, y) == (3, "c")

    class Marker(NamedTuple):
        """No fields."""

    assert Marker() == () and Marker() == () and repr(Marker()) == "Marker()"


def test_a_field_without_a_default_after_one_with_is_refused():
    with pytest.raises(TypeError):

        class Bad(NamedTuple):
            x: int = 0
            y: int
