"""A process group's CPU time, resident memory and open file descriptors, read from
``/proc``: the server under test measured from outside, its workers included."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

CLK_TCK = os.sysconf("SC_CLK_TCK")


def group(pgid: int) -> list[int]:
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            fields = stat.rsplit(")", 1)[1].split()
            if int(fields[2]) == pgid:  # the process group
                pids.append(int(entry))
    return pids


def cpu_seconds(pgid: int) -> float:
    total = 0
    for pid in group(pgid):
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / CLK_TCK


def rss_bytes(pgid: int) -> int:
    total = 0
    for pid in group(pgid):
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
        except OSError:
            continue
    return total


def open_fds(pgid: int) -> int:
    total = 0
    for pid in group(pgid):
        try:
            total += len(os.listdir(f"/proc/{pid}/fd"))
        except OSError:
            continue
    return total


async def cpu_share(pgid: int, window: float) -> float:
    """Share of one core the server used over ``window`` seconds."""
    cpu, wall = cpu_seconds(pgid), time.monotonic()
    await asyncio.sleep(window)
    return (cpu_seconds(pgid) - cpu) / (time.monotonic() - wall)
