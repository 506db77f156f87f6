"""``python -m subtok`` runs the command-line tool."""

from .cli import main

main(prog_name="subtok")
