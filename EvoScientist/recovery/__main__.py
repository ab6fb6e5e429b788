import sys

from EvoScientist.recovery.cli import main

sys.exit(main())
