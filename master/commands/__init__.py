"""The master's commands, one module each: ``cmd_<name>(ctx, args) -> int``."""
