"""CLI subcommands, one module each, registered in `deepmem.cli.COMMAND_MODULES`."""
