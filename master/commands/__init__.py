"""The master's commands, one module each, named after the command.

Each module holds ``register(commands)``, which adds its sub-parser to
:class:`master.commands.base.Subcommands` (help, description, examples, arguments) and
sets its handler ``cmd_<name>(ctx, args) -> int``; :mod:`master.cli` assembles them
and runs the chosen one. :mod:`master.commands.base` holds what they share: exit
codes, output, confirmation and argument types.
"""
