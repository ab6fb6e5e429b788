"""PostgreSQL against SQLite on the same threads, and a restarted server's first read
against a warm one, side by side in one run. Run alone with ``python -m bench --only
round-two`` (``bench/run.py`` calls ``measure``, ``bench/report.py`` ``targets``/``section``).
"""

from __future__ import annotations

import contextlib
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench import cold, cold_floor, seed
from bench import postgres as bench_postgres
from bench.in_process import InProcess
from bench.postgres_floor import PostgresFloor, head_query
from bench.postgres_wake import postgres_wake_delays
from bench.timing import interleaved, ms
from evoscientist_final_answer.store.postgres.reader import PostgresAnswerReader

SQLITE_ROUTE = "SQLite route"
PG_FLOOR = "Postgres floor"
PG_ROUTE = "Postgres route"
PG_REPEAT = "Postgres repeat poll"
PG_HEAD = "Postgres head query"
COLUMNS = (SQLITE_ROUTE, PG_FLOOR, PG_ROUTE, PG_REPEAT, PG_HEAD)
BACKENDS = ("SQLite", "Postgres")


@dataclass
class RoundTwo:
    postgres: dict[tuple[str, int], dict[str, float]] = field(default_factory=dict)
    # (backend, mode, size) -> {"first read", "warm read"}
    cold: dict[tuple[str, str, int], dict[str, float]] = field(default_factory=dict)
    # Seconds from a run's final commit to a held request's return, on PostgreSQL.
    wake: list[float] = field(default_factory=list)
    postgres_missing: str | None = None


async def measure(result: RoundTwo, sizes: list[int], work: Path) -> None:
    from bench.asgi import call_asgi, route

    db = work / "round-two.db"
    threads = [(mode, size) for mode in ("plain", "delta") for size in sizes]
    for mode, size in threads:
        print(f"  seeding {mode} thread of {size} messages", flush=True)
        await seed.thread_direct(db, f"{mode}-{size}", mode, size)
    local = InProcess(db)
    with contextlib.ExitStack() as stack:
        uri = stack.enter_context(bench_postgres.database())
        if uri is None:
            result.postgres_missing = "no PostgreSQL server"
        else:
            for mode, size in threads:
                print(f"  seeding {mode} thread of {size} messages in Postgres", flush=True)
                await bench_postgres.seed(uri, mode, size)
            on_postgres = bench_postgres.PostgresInProcess(uri)
            reader = on_postgres.service.direct
            assert isinstance(reader, PostgresAnswerReader)
            floor = PostgresFloor(uri)
            for mode, size in threads:
                thread_id = f"{mode}-{size}"

                async def repeat(tid: str = thread_id) -> None:
                    status, body = await call_asgi(on_postgres.app, route(tid))
                    if status != 200:
                        raise RuntimeError(f"{status}: {body[:200]!r}")

                medians = await interleaved(
                    {
                        SQLITE_ROUTE: lambda tid=thread_id: local.cold(tid),
                        PG_FLOOR: lambda tid=thread_id: floor(tid),
                        PG_ROUTE: lambda tid=thread_id: on_postgres.cold(tid),
                        PG_REPEAT: repeat,
                        PG_HEAD: lambda tid=thread_id: head_query(reader, tid),
                    },
                    25 if size <= 2_000 else 9,
                )
                result.postgres[(mode, size)] = medians
                print(
                    f"  {mode:5} {size:>6}: "
                    + ", ".join(f"{k} {ms(v)}" for k, v in medians.items()),
                    flush=True,
                )
            await on_postgres.close()
            await floor.close()
            print("  long-poll wake on Postgres", flush=True)
            result.wake = await postgres_wake_delays(uri, runs=10)
        for mode, size in threads:
            factories = {"SQLite": cold.sqlite_factory(db)}
            if uri is not None:
                factories["Postgres"] = cold.postgres_factory(uri)
            for backend, factory in factories.items():
                rounds = 9 if size <= 2_000 else 5
                thread_id = f"{mode}-{size}"
                floor = _floor(backend, db, uri, thread_id) if mode == "delta" else None
                medians = await cold.first_vs_warm(factory, thread_id, rounds, floor)
                result.cold[(backend, mode, size)] = medians
                print(
                    f"  {backend} {mode:5} {size:>6}: "
                    + ", ".join(f"{k} {ms(v)}" for k, v in medians.items()),
                    flush=True,
                )
    await local.close()


def _floor(backend: str, db: Path, uri: str | None, thread_id: str) -> Any:
    """The first-read floor's maker for ``cold.first_vs_warm`` (``bench.cold_floor``)."""

    async def make(reader: Any) -> cold_floor.Floor | None:
        found = await cold_floor.snapshot_of(reader, thread_id)
        if found is None:
            return None
        where, answer_id = found
        if backend == "SQLite":
            return cold_floor.sqlite_floor(db, thread_id, where, answer_id)
        assert uri is not None
        return cold_floor.postgres_floor(uri, thread_id, where, answer_id)

    return make


def targets(result: RoundTwo) -> list[tuple[str, str, bool]]:
    rows: list[tuple[str, str, bool]] = []
    if result.postgres:
        worst = max(m[PG_ROUTE] / m[SQLITE_ROUTE] for m in result.postgres.values())
        rows.append(
            ("Postgres route ≤ 2× SQLite route, every size", f"{worst:.2f}× at most", worst <= 2)
        )
        plain = result.postgres.get(("plain", 2000))
        if plain:
            r = plain[PG_ROUTE] / plain[PG_FLOOR]
            rows.append(
                ("Postgres route ≤ 1.5× the Postgres floor (2,000 msgs)", f"{r:.2f}×", r <= 1.5)
            )
        slowest = max(m[PG_REPEAT] for m in result.postgres.values())
        head = max(m[PG_HEAD] for m in result.postgres.values())
        rows.append(
            (
                "Postgres repeat poll ≤ 2 ms in-process, every size",
                f"{ms(slowest)} at most (its head query: {ms(head)} at most)",
                slowest <= 0.002,
            )
        )
    if result.wake:
        rows.append(
            (
                "Postgres long-poll wakes ≤ 100 ms after the final commit",
                f"{ms(max(result.wake))} at most",
                max(result.wake) <= 0.1,
            )
        )
    if result.cold:
        worst_key = max(result.cold, key=lambda k: _first_over_warm(result.cold[k]))
        worst = _first_over_warm(result.cold[worst_key])
        backend, mode, size = worst_key
        floor = result.cold[worst_key].get(cold.FLOOR)
        bound = f"; its snapshot read alone: {floor / result.cold[worst_key][cold.WARM]:.2f}×"
        rows.append(
            (
                "first read ≤ 2× a warm read, every size",
                f"{worst:.2f}× at most ({backend}, {mode}, {size:,} msgs"
                + (bound if floor is not None else "")
                + ")",
                worst <= 2,
            )
        )
    return rows


def _first_over_warm(medians: dict[str, float]) -> float:
    return medians[cold.FIRST] / medians[cold.WARM]


def section(result: RoundTwo) -> list[str]:
    lines: list[str] = []
    if result.postgres or result.postgres_missing:
        lines += [
            "## PostgreSQL next to SQLite",
            "",
            "The same threads written by the same graphs to `sessions.db` and to "
            "PostgreSQL (127.0.0.1), read in-process, cache cleared (*route*). The "
            "*Postgres floor* is the newest checkpoint's row with the `messages` blob at the "
            "version it names, in one SELECT, plus a msgpack parse that builds no message "
            "objects. *Repeat poll*: nothing written since (the answer cached per head; one "
            "head query, no blob read); *head query*: that query alone. Route and floor "
            "load the blob as a view of the buffer libpq received it in (no copy before "
            "the parse). The route does not send a plain value over 64 KB: its first bytes, "
            "its size and as many of its last bytes as the step that made it wrote come "
            "with that step's writes, which prove the entries it ends with "
            "(`evoscientist_final_answer.store.value_end`); the floor sends it whole, so a large "
            "plain "
            "thread's route reads less than its floor.",
            "",
        ]
        if result.postgres_missing:
            lines += [f"Not measured: {result.postgres_missing}.", ""]
        else:
            lines += [
                "| thread | " + " | ".join(COLUMNS) + " | Postgres / SQLite | Postgres / floor |",
                "|---" * (len(COLUMNS) + 3) + "|",
            ]
            for (mode, size), m in sorted(result.postgres.items()):
                lines.append(
                    f"| {mode}, {size:,} msgs | "
                    + " | ".join(ms(m[c]) for c in COLUMNS)
                    + f" | {m[PG_ROUTE] / m[SQLITE_ROUTE]:.2f}×"
                    + f" | {m[PG_ROUTE] / m[PG_FLOOR]:.2f}× |"
                )
            lines.append("")
    if result.wake:
        lines += [
            f"A request held with `wait=30` on PostgreSQL returns "
            f"{ms(statistics.median(result.wake))} (median of {len(result.wake)}; max "
            f"{ms(max(result.wake))}) after the run's final checkpoint is committed by "
            "another connection: one watcher query per interval serves every waiter.",
            "",
        ]
    if result.cold:
        lines += [
            "## First read after a restart",
            "",
            "*First read*: a reader that has read nothing (a fresh process's state: no "
            "answers, no checkpoint facts, no decoded DeltaChannel snapshot), its connection "
            "open. *Warm read*: a reader that read the thread before, answer cache cleared. "
            "A DeltaChannel thread's first read must ask its snapshot (about 12 MB at "
            "10,000 messages) one thing: whether a write since replaced or removed one of "
            "the messages the answer is read from. It asks only about those few ids, newest "
            "first: SQLite scans the snapshot's bytes in the row it read (walked to, neither "
            "parsed nor copied), PostgreSQL has the server scan them (`position`, nothing "
            "sent) and reads the snapshot only if one may be there; its pooled connections "
            "prepare a read's statements as they open, not on a thread's first read. A warm "
            "read keeps the snapshot and what it learnt. *Floor*: that question alone on a "
            "fresh connection (the snapshot's row read and scanned for the answer's id; on "
            "PostgreSQL the "
            "scan on the server), against the warm read: no first read can cost less, and "
            "at 10,000 messages it alone is more than 2× a warm read. A large plain "
            "thread's first read on PostgreSQL is a new connection's: the server "
            "decompresses the value to send its last bytes, and a new server process's "
            "first two such reads fill memory it has not touched yet (at 10,000 messages "
            "about 12 ms each, then about 3.5 ms, whichever threads they read); a "
            "restarted server's pooled connections pay that once each, not per thread.",
            "",
            "| thread | "
            + " | ".join(f"{b} first | {b} warm | {b} ratio | {b} floor" for b in BACKENDS)
            + " |",
            "|---" * (1 + 4 * len(BACKENDS)) + "|",
        ]
        keys = sorted({(mode, size) for _, mode, size in result.cold})
        for mode, size in keys:
            cells = []
            for backend in BACKENDS:
                m = result.cold.get((backend, mode, size))
                if m is None:
                    cells += ["—"] * 4
                else:
                    first, warm, floor = m[cold.FIRST], m[cold.WARM], m.get(cold.FLOOR)
                    cells += [ms(first), ms(warm), f"{first / warm:.2f}×"]
                    cells.append("—" if floor is None else f"{ms(floor)} ({floor / warm:.2f}×)")
            lines.append(f"| {mode}, {size:,} msgs | " + " | ".join(cells) + " |")
        lines.append("")
    return lines
