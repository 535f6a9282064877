"""Subcommands of ``tempbench`` that belong to the evaluation side."""
