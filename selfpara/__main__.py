"""`python -m selfpara` runs the CLI."""

from selfpara.cli import main

main()
