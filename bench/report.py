"""docs/benchmarks.md (and its plot) from one run's measurements, targets checked."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from bench.timing import ms

PLOT = "benchmarks-latency.png"
METHODS = (
    "floor",
    "route in-process",
    "route in-process, repeat poll",
    "route over HTTP",
    "GET /threads/{id}/state",
    "route in-process, Postgres",
)


def ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}×"


def targets(report: Any) -> list[tuple[str, str, bool]]:
    """(target, measured, met) for every target whose scenario ran."""
    rows: list[tuple[str, str, bool]] = []
    plain = report.sizes.get(("plain", 2000))
    delta = report.sizes.get(("delta", 2000))
    if plain:
        speedup = plain["GET /threads/{id}/state"] / plain["route over HTTP"]
        rows.append(
            (
                "route over HTTP ≥ 10× faster than /state (2,000 msgs)",
                f"{speedup:.1f}× faster",
                speedup >= 10,
            )
        )
        r = plain["route in-process"] / plain["floor"]
        rows.append(("route in-process ≤ 1.5× the floor (2,000 msgs)", f"{r:.2f}×", r <= 1.5))
    if plain and delta:
        r = delta["route in-process"] / plain["route in-process"]
        rows.append(("DeltaChannel worst case ≤ 3× plain (2,000 msgs)", f"{r:.2f}×", r <= 3))
    for key, title in (
        ("threads", "10 vs 10,000 threads"),
        ("checkpoints", "10 vs 10,000 checkpoints"),
    ):
        if key in report.flat:
            small, large = report.flat[key].values()
            r = large / small
            rows.append((f"flat: {title} ≤ 1.2×", f"{r:.2f}×", r <= 1.2))
    if report.response_bytes:
        worst = max(body - answer for body, answer in report.response_bytes.values())
        rows.append(("response bytes ≤ answer + 400", f"answer + {worst} B at most", worst <= 400))
    if report.sizes:
        slowest = max(m["route in-process, repeat poll"] for m in report.sizes.values())
        rows.append(
            (
                "repeat poll ≤ 1 ms in-process, every size",
                ms(slowest) + " at most",
                slowest <= 0.001,
            )
        )
    if report.long_poll:
        wake = report.long_poll["wake max"]
        rows.append(
            ("long-poll wakes ≤ 100 ms after the final commit", ms(wake) + " at most", wake <= 0.1)
        )
        cpu = report.long_poll["idle cpu share"]
        rows.append(("100 idle waiters ≤ 1 % of a core", f"{cpu * 100:.2f} %", cpu <= 0.01))
    if report.load:
        load = report.load
        rows.append(
            ("load: zero errors", f"{load['errors']} of {load['requests']}", load["errors"] == 0)
        )
        drift = load["step loaded"] / load["step unloaded"] - 1
        rows.append(
            (
                "load: writer step within 10 % of unloaded",
                f"{ms(load['step unloaded'])} → {ms(load['step loaded'])} ({drift * 100:+.1f} %)",
                abs(drift) <= 0.10,
            )
        )
    rows += crowd_targets(report)
    return rows


CROWD_KINDS = {
    "one": "1,000 held `wait=30` polls on one running thread",
    "spread": "1,000 `wait=60` waiters over 100 threads (by `run_id`)",
    "fresh": "1,000 `wait=60` waiters over 100 threads with no checkpoint yet",
    "mixed": "1,000 held `wait=30` polls on one running thread, and a client that joins "
    "the run and then reads the route",
}


def crowd_targets(report: Any) -> list[tuple[str, str, bool]]:
    crowd = getattr(report, "crowd", None)
    if crowd is None:
        return []
    rows: list[tuple[str, str, bool]] = []
    for kind, title in CROWD_KINDS.items():
        measured = crowd.scenarios.get(kind)
        if not measured:
            continue
        drift = measured["wall"] / measured["wall alone"] - 1
        rows.append(
            (
                f"{title}: run wall time within 10 % of no waiters",
                f"{measured['wall alone']:.2f} s → {measured['wall']:.2f} s ({drift * 100:+.1f} %)",
                drift <= 0.10,
            )
        )
        rows.append(
            (
                f"{title}: every answer the final answer",
                f"{measured['right']} of {measured['answers']}",
                measured["right"] == measured["answers"] == 1_000 * measured["repeats"],
            )
        )
        rows.append(
            (
                f"{title}: wake after the final commit p99 ≤ 100 ms",
                f"p50 {ms(measured['wake_p50'])}, p99 {ms(measured['wake_p99'])} (the server "
                f"itself marks the run done {ms(measured['done after commit p99'])} after the "
                "commit at p99)",
                measured["wake_p99"] <= 0.1,
            )
        )
    rows += route_only_targets(crowd)
    idle = crowd.idle
    if idle:
        cost = idle["held cpu"] - idle["baseline cpu"]
        rows += [
            (
                "idle cost ≤ 1 % of a core per 1,000 waiters",
                f"{cost * 100:.2f} % ({idle['held cpu'] * 100:.2f} % held, "
                f"{idle['baseline cpu'] * 100:.2f} % without)",
                cost <= 0.01,
            ),
            (
                "1,000 waiters aborted at once: CPU back to idle within 1 s",
                f"{idle['back to idle'] * 1000:.0f} ms",
                idle["back to idle"] <= 1.0,
            ),
            ("RSS per held waiter: reported", f"{idle['rss per waiter'] / 1024:.1f} KiB", True),
            (
                "file descriptors after the waiters end: flat",
                f"{idle['fds before']} before, {idle['fds after']} after",
                idle["fds after"] <= idle["fds before"] + 2,
            ),
        ]
    return rows


# Route only: the run's wall with a thousand held polls may exceed the host's floor (a
# do-nothing held request in the same server) by this many points at most.
ROUTE_ONLY_WALL_POINTS = 0.10


def route_only_targets(crowd: Any) -> list[tuple[str, str, bool]]:
    """A host app with only ``final_answer_routes()``: the one-thread crowds against the
    same wake targets, and the run's wall against the host's own floor."""
    floor = crowd.route_only.get("floor")
    rows: list[tuple[str, str, bool]] = []
    for kind in ("one", "mixed"):
        measured = crowd.scenarios.get(kind) if crowd.route_only_is_main else None
        title = CROWD_KINDS[kind]
        if measured is None:
            measured = crowd.route_only.get(kind)
            title = f"route only ({crowd.route_only_app}): {title}"
            if not measured:
                continue
        if floor:
            drift = measured["wall"] / measured["wall alone"] - 1
            floor_drift = floor["wall"] / floor["wall alone"] - 1
            rows.append(
                (
                    f"{title}: run wall time within 10 points of the host's floor (a "
                    "thousand do-nothing held requests in the same server)",
                    f"{measured['wall alone']:.2f} s → {measured['wall']:.2f} s "
                    f"({drift * 100:+.1f} %); floor {floor['wall alone']:.2f} s → "
                    f"{floor['wall']:.2f} s ({floor_drift * 100:+.1f} %)",
                    drift - floor_drift <= ROUTE_ONLY_WALL_POINTS,
                )
            )
        if crowd.route_only_is_main:
            continue  # its own targets are the main table's
        rows.append(
            (
                f"{title}: every answer the final answer",
                f"{measured['right']} of {measured['answers']}",
                measured["right"] == measured["answers"] == 1_000 * measured["repeats"],
            )
        )
        one_pass = crowd.route_only.get("floor-pass")
        beside = (
            f" (the host's one-pass floor, from its release: p50 "
            f"{ms(one_pass['wake_p50'])}, p99 {ms(one_pass['wake_p99'])})"
            if one_pass
            else ""
        )
        rows.append(
            (
                f"{title}: wake after the final commit p99 ≤ 100 ms",
                f"p50 {ms(measured['wake_p50'])}, p99 {ms(measured['wake_p99'])}{beside}",
                measured["wake_p99"] <= 0.1,
            )
        )
    return rows


def route_only_section(crowd: Any) -> list[str]:
    if not crowd.route_only:
        return []
    lines = [
        "",
        f"A host app that takes only `final_answer_routes()` (`{crowd.route_only_app}`, as "
        "upstream adopts the route: no front door, lifespan or collector settings of ours; "
        "every response passes the host's own middleware), served as `http.app` through "
        "`bench/host_floor.py`, which adds the host's floor: a thousand held requests that "
        "read, render and share nothing, released by one request once the run has ended "
        "(their wake counts from that request). Its one-pass floor is the route's own way "
        "of answering a crowd with nothing else: the release sends every held request's "
        "response in one pass, each through the `send` the host handed it, from one body "
        "rendered once; what that costs is the host's middleware and the sockets alone, "
        "so no route answering through the host's stack wakes a crowd sooner.",
        "",
        "| scenario | run wall, alone | with waiters | right answers | wake p50 | wake p99 |",
        "|---|---|---|---|---|---|",
    ]
    titles = {
        **CROWD_KINDS,
        "floor": "the host's floor: 1,000 do-nothing held requests",
        "floor-pass": "the host's one-pass floor: 1,000 held requests answered in one pass",
    }
    for kind in ("one", "mixed", "floor", "floor-pass"):
        m = crowd.route_only.get(kind)
        if m:
            lines.append(
                f"| {titles[kind]} | {m['wall alone']:.2f} s | {m['wall']:.2f} s | "
                f"{m['right']} / {m['answers']} | {ms(m['wake_p50'])} | {ms(m['wake_p99'])} |"
            )
    return lines


def crowd_section(report: Any) -> list[str]:
    crowd = getattr(report, "crowd", None)
    if crowd is None or not crowd.scenarios:
        return []
    lines = [
        "## A thousand waiting browsers",
        "",
        "A real `langgraph dev` (`--n-jobs-per-worker 10`; offline agent, runs of a few "
        "seconds). The waiters come from `bench/loadgen.py`, a process of its own holding one "
        "raw socket per request (a bare `asyncio.Protocol` on uvloop: a response costs it one "
        "callback, parsed only after all have arrived), so its cost is not the server's; the "
        "server's CPU, RSS and file descriptors are read from `/proc` for its process group. "
        "Each scenario makes its runs without waiters and with them, interleaved (the "
        "one-thread scenarios five times each, as one 2-s run varies by about 20 % from the "
        "next: the walls are medians, the delays pooled over their 5,000 waiters); in the "
        "mixed scenario another client joins the run and reads the route the moment the join "
        "returns, so that read, not the waiters' watch, is first to see the run end; run wall "
        "time is from the first run's creation to the last run's final checkpoint. The wake "
        "delay "
        "runs from the final checkpoint's commit to the end of each response as the load "
        "generator reads it: `bench/commit_clock.py` reads the store every 5 ms from outside "
        "the server and dates each new head to the start of the read *before* the one that "
        "first saw it, so a wake is never measured shorter than it was. The bench finds run "
        "ends with one thread search every 250 ms, not a request per run. "
        f"Load average when the run ended: {crowd.load_avg}.",
        "",
        "*Commit after `ts`*: how long after its own `ts` the server's checkpointer committed "
        "the final checkpoint. *Server marks the run done*: from the final checkpoint's `ts` "
        "to the run's own end as the server records it (`updated_at` of the run); until then "
        "the server holds the run and the route, whose contract lets the server's status win, "
        "says not complete. Both are the server's own latency, waiters or not.",
        "",
        "| scenario | run wall, alone | with waiters | right answers | polls sent again "
        "| unfinished at the last deadline | wake p50 | wake p99 | commit after `ts`, "
        "p50 / p99 | server marks the run done, p50 / p99 |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for kind, title in CROWD_KINDS.items():
        m = crowd.scenarios.get(kind)
        if m:
            lines.append(
                f"| {title} | {m['wall alone']:.2f} s | {m['wall']:.2f} s | "
                f"{m['right']} / {m['answers']} | {m.get('repolls', 0)} | {m['unfinished']} | "
                f"{ms(m['wake_p50'])} | "
                f"{ms(m['wake_p99'])} | {ms(m['commit lag p50'])} / {ms(m['commit lag p99'])} | "
                f"{ms(m['server lag p50'])} / {ms(m['server lag p99'])} |"
            )
    idle = crowd.idle
    if idle:
        lines += [
            "",
            f"- 1,000 waiters held on 100 threads with no checkpoint: the server used "
            f"{idle['held cpu'] * 100:.2f} % of a core, {idle['baseline cpu'] * 100:.2f} % "
            f"without them, measured once their first reads were done (connecting and the "
            f"first reads took {idle['attach cpu per waiter'] * 1000:.2f} ms of CPU per "
            f"waiter); RSS grew by {idle['rss per waiter'] / 1024:.1f} KiB per waiter (the "
            "server reuses memory the earlier scenarios freed first, so a figure near zero "
            "means no growth that stands out of that).",
            f"- All 1,000 aborted at once (RST): the server was idle again after "
            f"{idle['back to idle'] * 1000:.0f} ms; {idle['fds before']} file descriptors "
            f"before the waiters, {idle['fds after']} after.",
        ]
    lines += route_only_section(crowd)
    lines.append("")
    return lines


def plot(report: Any, path: Path) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, ax = plt.subplots(figsize=(8, 5), dpi=110)
    for mode, style in (("plain", "-"), ("delta", "--")):
        sizes = sorted(size for m, size in report.sizes if m == mode)
        if not sizes:
            continue
        for method in METHODS:
            if any(method not in report.sizes[(mode, s)] for s in sizes):
                continue
            ax.plot(
                sizes,
                [report.sizes[(mode, s)][method] * 1000 for s in sizes],
                style,
                marker="o",
                label=f"{method} ({mode})",
            )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("messages in the thread")
    ax.set_ylabel("median latency (ms)")
    ax.set_title("final-answer route vs floor vs /threads/{id}/state")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return True


def write(report: Any, out: Path, *, machine: str, when: datetime) -> bool:
    from bench import first_poll, rollback, round_two

    rows = targets(report)
    if report.round_two is not None:
        rows += round_two.targets(report.round_two)
    if getattr(report, "first_poll", None) is not None:
        rows += first_poll.targets(report.first_poll)
    if getattr(report, "rollback", None) is not None:
        rows += rollback.targets(report.rollback)
    lines = [
        "# Benchmarks",
        "",
        f"Measured by `make bench` on {when:%Y-%m-%d %H:%M} UTC, {machine}, in "
        f"{report.seconds:.0f} s. Every ratio compares medians taken in the same interleaved "
        "rounds. Not part of `make test`: these are timings, and tests assert behaviour.",
        "",
        "## Targets",
        "",
        "| target | measured | met |",
        "|---|---|---|",
        *(f"| {t} | {m} | {'yes' if ok else '**no**'} |" for t, m, ok in rows),
        "",
    ]
    if report.sizes:
        lines += [
            "## Latency by thread size",
            "",
            "The floor is a SELECT of the newest checkpoint blob plus a msgpack parse that "
            "builds no message objects. *Route in-process* is the standalone app's ASGI callable "
            "called directly, its answer cache cleared before each request (the decode is "
            "measured); "
            "*repeat poll* is the same request when nothing has been written since: the "
            "answer is cached per head, and the store's change signal (inotify) vouches "
            "that the head is unchanged, so the poll runs no query at all. "
            "*Over HTTP* both run in a real `langgraph dev` (the route's answers cached as in "
            "real polling). *Postgres*: the same threads written by the same graphs through "
            "`AsyncPostgresSaver`, read in-process by `PostgresAnswerReader` (cache cleared; "
            "the server on 127.0.0.1). `delta` threads keep messages in the agent's "
            "DeltaChannel, 99 updates past a snapshot: the worst case.",
            "",
            "| thread | " + " | ".join(METHODS) + " | route HTTP vs /state | body − answer |",
            "|---" * (len(METHODS) + 3) + "|",
        ]
        for (mode, size), medians in sorted(report.sizes.items()):
            body, answer = report.response_bytes[(mode, size)]
            speedup = medians["GET /threads/{id}/state"] / medians["route over HTTP"]
            lines.append(
                f"| {mode}, {size:,} msgs | "
                + " | ".join(ms(medians[m]) if m in medians else "—" for m in METHODS)
                + f" | {speedup:.0f}× faster | {body - answer} B |"
            )
        if plot(report, out.with_name(PLOT)):
            lines += ["", f"![latency against thread size]({PLOT})"]
        lines.append("")
    if report.round_two is not None:
        lines += round_two.section(report.round_two)
    if getattr(report, "first_poll", None) is not None:
        lines += first_poll.section(report.first_poll)
    if report.flat:
        lines += ["## Flat as stores grow", "", "| store | median | ratio |", "|---|---|---|"]
        for medians in report.flat.values():
            (small_name, small), (large_name, large) = medians.items()
            lines.append(f"| {small_name} | {ms(small)} | |")
            lines.append(f"| {large_name} | {ms(large)} | {ratio(large, small)} |")
        lines.append("")
    if report.long_poll:
        lp = report.long_poll
        lines += [
            "## Long-poll",
            "",
            f"- A request held with `wait=30` returns {ms(lp['wake median'])} (median; max "
            f"{ms(lp['wake max'])}) after the run's final checkpoint is committed by another "
            "connection: waiters sleep on the store's change signal (inotify on its "
            "directory; `stat` polling where inotify is missing).",
            f"- 100 held requests cost {lp['idle cpu share'] * 100:.2f} % of a core over "
            f"{lp['idle window']:.1f} s (the whole process, writer parked).",
            "",
        ]
    if report.load:
        load = report.load
        lines += [
            "## Load",
            "",
            "100 pollers against the standalone app (uvicorn, its own process): half poll "
            "`wait=0` every second, half hold `wait=30`, while a run in a third process writes "
            "a checkpoint every 100 ms. Each poller has its own HTTP client and connection, "
            "as each WebUI does; the pollers run in the benchmark's process, so latencies "
            "include that client's own cost on the same two cores.",
            "",
            f"- {load['requests']} `wait=0` polls, {load['errors']} errors; "
            f"p50 {ms(load['p50'])}, p99 {ms(load['p99'])}.",
            f"- writer step (commit to commit): {ms(load['step unloaded'])} unloaded, "
            f"{ms(load['step loaded'])} loaded.",
            "",
        ]
    lines += crowd_section(report)
    if getattr(report, "rollback", None) is not None:
        lines += rollback.section(report.rollback)
    out.write_text("\n".join(lines))
    print("\n".join(lines))
    return all(ok for _, _, ok in rows)
