"""soloqueue-mem: local-first memory for LLM agents.

Importing the package is cheap on purpose: hooks call the CLI once per agent turn.
"""

__version__ = "0.1.0"
