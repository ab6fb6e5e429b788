import sys

from EvoScientist.recovery.cli import main

sys.exit(main(prog="python -m EvoScientist.recovery"))
