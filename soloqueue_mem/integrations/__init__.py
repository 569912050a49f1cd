"""Agent integrations: Claude Code hooks and transcript import (no Typer, no Rich)."""
