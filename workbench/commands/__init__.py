"""Sub-commands of the ``workbench`` command line.

Each module in this package defines ``register(subparsers)``, which adds its sub-command(s)
with ``set_defaults(func=...)``; :mod:`workbench.cli` discovers the modules, so a new command
is a new file here. ``func(args)`` returns an exit code; it may raise
:class:`workbench.errors.WorkbenchError`, which the CLI prints as a one-line error.
"""
