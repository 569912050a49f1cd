"""``python -m soloqueue_mem`` runs the command-line program."""

from soloqueue_mem.cli import main

main()
