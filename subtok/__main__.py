"""``python -m subtok`` runs the command-line tool."""

from .cli import run

run()
