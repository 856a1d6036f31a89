"""The ``workbench`` command line: the entry point (:mod:`.main`) and one module per command.

Each command module defines ``register(subparsers)``, which adds its sub-command(s) with
``set_defaults(func=...)``; :data:`workbench.cli.main.COMMANDS` lists them, so a new command is a
new module here and one entry there. ``func(args)`` returns an exit code; it may raise
:class:`workbench.errors.WorkbenchError`, which the entry point prints as a one-line error
(exit code 2).
"""
