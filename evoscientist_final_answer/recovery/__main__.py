import sys

from evoscientist_final_answer.recovery.cli import main

sys.exit(main(prog="python -m evoscientist_final_answer.recovery"))
