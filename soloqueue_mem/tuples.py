"""``NamedTuple`` for the modules on ``log``'s start-up path, without ``typing``.

Hooks start a process for every agent turn. Importing ``typing`` costs about as many
CPU instructions as the whole ``sqlite3`` import, and ``typing.NamedTuple`` compiles
each field's annotation (a string, under ``from __future__ import annotations``) into a
``ForwardRef``: ~120 fields on ``log``'s path. This base builds the same class, a
:func:`collections.namedtuple` with the fields, defaults, methods and docstring written
in the class body; type checkers see ``typing.NamedTuple``. Annotations are kept as
written (``typing.get_type_hints`` resolves them as usual).
"""

from collections import namedtuple

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NamedTuple as NamedTuple
else:
    # What the class body may define besides its fields and methods.
    _NOT_COPIED = frozenset({"__module__", "__annotations__"})

    class _NamedTupleMeta(type):
        def __new__(mcs, name: str, bases: tuple, namespace: dict):  # noqa: N804
            if not bases:  # the NamedTuple base itself
                return super().__new__(mcs, name, bases, namespace)
            annotations = namespace.get("__annotations__", {})
            fields = list(annotations)
            defaults = [namespace[field] for field in fields if field in namespace]
            if any(field not in namespace for field in fields[len(fields) - len(defaults) :]):
                raise TypeError(f"{name}: a field without a default follows one with a default")
            cls = namedtuple(name, fields, defaults=defaults, module=namespace["__module__"])
            cls.__annotations__ = annotations
            for key, value in namespace.items():
                if key not in _NOT_COPIED and key not in annotations:
                    setattr(cls, key, value)
            return cls

    class NamedTuple(metaclass=_NamedTupleMeta):
        """Subclass it as ``typing.NamedTuple``: the class is a named tuple."""
