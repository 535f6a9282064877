"""One module per ``tempbench`` subcommand, each with ``add_arguments(parser)`` and ``run(args) -> int``."""
