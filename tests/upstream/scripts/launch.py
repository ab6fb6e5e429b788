"""Run by the upstream environment's interpreter, upstream's tree first on its path:
upstream's own launcher (``EvoScientist.langgraph_dev.manager.start_langgraph_dev``, what
``EvoSci`` runs) starts its server on ``argv[1]`` in ``argv[2]``, with the CORS it builds
from ``boundary.py``. Prints ``PID <pid> LOG <path>`` once the server is up; stops it when
its stdin closes."""

from __future__ import annotations

import sys
from pathlib import Path

from EvoScientist.langgraph_dev import manager

process = manager.start_langgraph_dev(Path(sys.argv[2]), port=int(sys.argv[1]), host="127.0.0.1")
print(f"PID {process.pid} LOG {manager.RUNTIME.log_file}", flush=True)
sys.stdin.read()
manager.stop_langgraph_dev(process)
