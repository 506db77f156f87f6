"""``python -m subtok`` runs the command-line tool."""

from subtok.cli.app import run

run()
