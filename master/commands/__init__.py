"""The master's commands that live in their own modules (``cmd_<name>(ctx, args) -> int``)."""
