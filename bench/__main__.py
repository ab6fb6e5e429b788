"""``python -m bench``: measure, then write docs/benchmarks.md and its plot."""

from __future__ import annotations

import asyncio
import sys

from bench.run import main

if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1:])))
