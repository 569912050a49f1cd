"""soloqueue-mem: local-first memory for LLM agents.

Importing the package is cheap on purpose: hooks call the CLI once per agent turn.
"""

__version__ = "0.1.0"

TYPE_CHECKING = False  # typing is not imported at run time: see soloqueue_mem.tuples
if TYPE_CHECKING:  # what type checkers see of the lazy ``Store`` below
    from soloqueue_mem.api.store import Store


def __getattr__(name: str) -> object:
    """``soloqueue_mem.Store``, imported on first use (the CLI never needs it)."""
    if name == "Store":
        from soloqueue_mem.api.store import Store

        return Store
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["Store", "__version__"]
