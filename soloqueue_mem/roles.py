"""Who can speak in a logged turn: the one list the parser, the CLI and the fast parser
share (a module with no imports, so the Typer-free ``log`` path can read it)."""

ROLES = ("user", "assistant", "system", "tool", "thought")
