"""Subcommands of ``tempbench`` that belong to the retriever side."""
