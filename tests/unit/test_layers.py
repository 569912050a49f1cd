"""The package's layers, lowest first, and the one rule between them: a module imports
only from its own layer or a lower one (lazy imports inside functions count too).

A layer is a list of module prefixes; a module belongs to the layer of its longest
matching prefix. Subsystems keep their tables' DDL in a ``schema`` module that sits
just above ``db``'s core, so ``db/schema_*.py`` can list them without reaching up.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import soloqueue_mem

PACKAGE = Path(soloqueue_mem.__file__).parent

LAYERS: list[tuple[str, list[str]]] = [
    (
        "core",
        [
            "errors",
            "clock",
            "jsonio",
            "fsio",
            "streams",
            "bounded_io",
            "roles",
            "sanitize",
            "faults",
            "lock",
            "home",
            "text",
            "tuples",
        ],
    ),
    ("settings", ["config", "redact", "context.models", "context.tokens"]),
    ("db core", ["db.ids", "db.migrate", "db.connect"]),
    (
        "schemas",
        [
            "sessions.schema",
            "memory.schema",
            "context.schema",
            "semantic.schema",
            "artifacts.schema",
            "graph.schema",
            "lifecycle.schema",
            "state.schema",
        ],
    ),
    ("db", ["db"]),
    ("records", ["artifacts", "sessions"]),
    ("domain", ["memory", "lifecycle", "graph", "semantic", "state", "context"]),
    ("services", ["integrations", "ops", "pg", "storage"]),
    ("api", ["api"]),
    ("cli", ["cli", "__main__", "__init__"]),
]


def _layer_of(module: str) -> int:
    """The layer index of ``soloqueue_mem.<module>`` (longest matching prefix)."""
    best, best_len = None, -1
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best_len:
                best, best_len = index, len(prefix)
    assert best is not None, f"soloqueue_mem.{module} is in no layer: add it to LAYERS"
    return best


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    if parts[-1] == "__init__" and len(parts) > 1:
        parts = parts[:-1]
    return ".".join(parts)


def _imports(path: Path) -> set[str]:
    """Modules of the package that ``path`` imports, relative to ``soloqueue_mem``."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
            # ``from soloqueue_mem import jsonio`` imports the module soloqueue_mem.jsonio
            names += [
                f"{node.module}.{alias.name}"
                for alias in node.names
                if _is_module(f"{node.module}.{alias.name}")
            ]
        else:
            continue
        for name in names:
            if name.startswith("soloqueue_mem."):
                found.add(name.removeprefix("soloqueue_mem."))
    return {name for name in found if _is_module(f"soloqueue_mem.{name}")}


def _is_module(dotted: str) -> bool:
    parts = dotted.split(".")[1:]
    base = PACKAGE.joinpath(*parts)
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def test_no_module_imports_a_higher_layer():
    upward = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module_name(path)
        own = _layer_of(module)
        for imported in sorted(_imports(path)):
            if _layer_of(imported) > own:
                upward.append(
                    f"{module} ({LAYERS[own][0]}) imports {imported} "
                    f"({LAYERS[_layer_of(imported)][0]})"
                )
    assert not upward, "\n".join(upward)


def test_db_core_has_no_import_cycle():
    """connect runs the migrations; migrate must not import connect back."""
    assert "db.connect" not in _imports(PACKAGE / "db" / "migrate.py")
    assert _imports(PACKAGE / "db" / "migrate.py") <= {"errors"}


def test_every_layer_prefix_names_a_module():
    """The layer list names real modules (a renamed package cannot slip out of it)."""
    for _, prefixes in LAYERS:
        for prefix in prefixes:
            assert _is_module(f"soloqueue_mem.{prefix}") or prefix == "__init__", prefix


def test_every_module_imports():
    """Moving a module cannot leave an import behind (only missing extras may fail)."""
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module_name(path)
        if module == "__main__":  # runs the CLI
            continue
        name = "soloqueue_mem" if module == "__init__" else f"soloqueue_mem.{module}"
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as exc:
            assert exc.name and not exc.name.startswith("soloqueue_mem"), (name, exc)
