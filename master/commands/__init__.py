"""One module per master command (``cmd_<name>(ctx, args) -> int``); the parser is in cli.py."""
