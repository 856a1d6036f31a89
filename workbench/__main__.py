import sys

from workbench.cli.entry import entry

sys.exit(entry())
