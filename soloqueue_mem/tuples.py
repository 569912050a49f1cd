"""``NamedTuple`` (and ``Protocol`` and ``Any``) for the modules on the hot paths'
start-up, without ``typing``.

Hooks start a process for every agent turn. Importing ``typing`` costs about as many
CPU instructions as the whole ``sqlite3`` import, ``typing.NamedTuple`` compiles each
field's annotation (a string, under ``from __future__ import annotations``) into a
``ForwardRef``, and :func:`collections.namedtuple` compiles each class's ``__new__``
from source: together a sixth of a ``log`` call, for ~15 classes of which a call
instantiates about half. This base builds the class that ``collections.namedtuple``
builds (same methods, attributes and behaviour), with the fields, defaults, methods
and docstring written in the class body, and compiles its ``__new__`` (the same
source) when a second instance is made: a ``log`` call makes one of most, bound by a
plain function instead. Type checkers see ``typing.NamedTuple``;
annotations are kept as written (``typing.get_type_hints`` resolves them as usual).
"""

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any as Any
    from typing import NamedTuple as NamedTuple
    from typing import Protocol as Protocol
else:
    Protocol = object  # an interface for type checkers: nothing checks it at run time
    Any = object  # a name for annotations, which are strings at run time
    from collections import _tuplegetter
    from keyword import iskeyword

    # What the class body may define besides its fields and methods.
    _NOT_COPIED = frozenset({"__module__", "__annotations__", "__qualname__"})

    class _NamedTupleMeta(type):
        def __new__(mcs, name: str, bases: tuple, namespace: dict):
            if not bases:  # the NamedTuple base itself
                return super().__new__(mcs, name, bases, namespace)
            annotations = namespace.get("__annotations__", {})
            fields = tuple(sys.intern(field) for field in annotations)
            defaults = tuple(namespace[field] for field in fields if field in namespace)
            if any(field not in namespace for field in fields[len(fields) - len(defaults) :]):
                raise TypeError(f"{name}: a field without a default follows one with a default")
            cls = _build(name, fields, defaults)
            cls.__module__ = namespace["__module__"]
            cls.__qualname__ = namespace.get("__qualname__", name)
            cls.__annotations__ = annotations
            for key, value in namespace.items():
                if key not in _NOT_COPIED and key not in annotations:
                    setattr(cls, key, value)
            return cls

    class NamedTuple(metaclass=_NamedTupleMeta):
        """Subclass it as ``typing.NamedTuple``: the class is a named tuple."""

    def _build(name: str, fields: tuple[str, ...], defaults: tuple) -> type:
        """:func:`collections.namedtuple`'s class (CPython 3.11), ``__new__`` deferred."""
        for field in fields:
            if not field.isidentifier() or iskeyword(field) or field.startswith("_"):
                raise ValueError(f"{name}: {field!r} cannot be a field name")
        count = len(fields)
        arguments = ", ".join(fields) + ("," if count == 1 else "")
        repr_format = "(" + ", ".join(f"{field}=%r" for field in fields) + ")"
        tuple_new = tuple.__new__
        cls: type

        def compiled_new() -> staticmethod:
            source = f"lambda _cls, {arguments}: _tuple_new(_cls, ({arguments}))"
            namespace = {"_tuple_new": tuple_new, "__builtins__": {}, "__name__": name}
            function = eval(source, namespace)  # the source collections.namedtuple compiles
            function.__name__ = "__new__"
            function.__qualname__ = f"{name}.__new__"
            function.__doc__ = f"Create new instance of {name}({arguments})"
            if defaults:
                function.__defaults__ = defaults
            return staticmethod(function)

        field_defaults = dict(zip(fields[count - len(defaults) :], defaults, strict=True))
        made = 0

        def __new__(subclass, *args, **kwargs):
            nonlocal made
            made += 1
            if made > 1:  # a second instance: later ones go straight to the compiled one
                cls.__new__ = compiled_new()
            return tuple_new(subclass, bind(args, kwargs))

        def bind(args: tuple, kwargs: dict) -> tuple:
            """The fields' values of a call, bound as the compiled ``__new__`` binds them."""
            if len(args) > count:
                raise TypeError(f"{name}() takes {count} arguments but {len(args)} were given")
            values = dict(zip(fields[: len(args)], args, strict=True))
            for key, value in kwargs.items():
                if key in values:
                    raise TypeError(f"{name}() got multiple values for argument {key!r}")
                if key not in fields:
                    raise TypeError(f"{name}() got an unexpected keyword argument {key!r}")
                values[key] = value
            missing = [field for field in fields if field not in values]
            if any(field not in field_defaults for field in missing):
                raise TypeError(f"{name}() missing required arguments: {missing}")
            return tuple(values[f] if f in values else field_defaults[f] for f in fields)

        @classmethod
        def _make(subclass, iterable):
            result = tuple_new(subclass, iterable)
            if len(result) != count:
                raise TypeError(f"Expected {count} arguments, got {len(result)}")
            return result

        def _replace(self, /, **changes):
            result = self._make(map(changes.pop, fields, self))
            if changes:
                raise ValueError(f"Got unexpected field names: {list(changes)!r}")
            return result

        def __repr__(self):
            "Return a nicely formatted representation string"
            return self.__class__.__name__ + repr_format % self

        def _asdict(self):
            "Return a new dict which maps field names to their values."
            return dict(zip(self._fields, self, strict=True))

        def __getnewargs__(self):
            "Return self as a plain tuple.  Used by copy and pickle."
            return tuple(self)

        for method in (_make.__func__, _replace, __repr__, _asdict, __getnewargs__):
            method.__qualname__ = f"{name}.{method.__name__}"

        namespace = {
            "__doc__": f"{name}({arguments})",
            "__slots__": (),
            "_fields": fields,
            "_field_defaults": field_defaults,
            "__new__": __new__,
            "_make": _make,
            "_replace": _replace,
            "__repr__": __repr__,
            "_asdict": _asdict,
            "__getnewargs__": __getnewargs__,
            "__match_args__": fields,
        }
        for index, field in enumerate(fields):
            namespace[field] = _tuplegetter(index, f"Alias for field number {index}")
        cls = type(name, (tuple,), namespace)
        return cls
