"""The table of scripts/bench/compare: each client's median time per
operation, and the others' time over hmap's (above 1: hmap is faster)."""

import statistics
import sys
from collections import defaultdict

OPERATIONS = [
    ("load", "bulk load, batches of 1,000 rows"),
    ("scan_tuned", "full scan, 1,000 rows per call"),
    ("scan_default", "full scan, default sizes"),
    ("get", "10,000 point gets, one at a time"),
    ("multiget", "10,000 gets in multi-gets of 100"),
]


def main():
    path, rows, rounds = sys.argv[1], sys.argv[2], sys.argv[3]
    times = defaultdict(list)
    with open(path) as lines:
        for line in lines:
            client, operation, seconds = line.rstrip("\n").split("\t")
            times[client, operation].append(float(seconds))

    def median(client, operation):
        found = times.get((client, operation))
        return statistics.median(found) if found else None

    print(f"{rows} rows, medians of {rounds} rounds (seconds); ratio = the other's time / hmap's")
    print()
    print("| operation | hmap | Java | Java / hmap | happybase | happybase / hmap |")
    print("|---|---|---|---|---|---|")
    for operation, label in OPERATIONS:
        hmap = median("hmap", operation)
        cells = [label, f"{hmap:.3f}" if hmap else "-"]
        for other in ("java", "happybase"):
            theirs = median(other, operation)
            cells.append(f"{theirs:.3f}" if theirs else "-")
            cells.append(f"**{theirs / hmap:.2f}**" if theirs and hmap else "-")
        print("| " + " | ".join(cells) + " |")
    cpu = [(label, median("hmap", operation + "_cpu"), median("hmap", operation)) for operation, label in OPERATIONS]
    if any(c for _, c, _ in cpu):
        print()
        print("hmap's own CPU time (all its threads), against its wall time:")
        print()
        print("| operation | CPU | wall | CPU per row | `hbase-thrift` crate (Thrift1): CPU per row |")
        print("|---|---|---|---|---|")
        for (operation, _), (label, c, wall) in zip(OPERATIONS, cpu):
            bulk = operation in ("load", "scan_tuned", "scan_default")
            per_row = f"{c / int(rows) * 1e6:.2f} µs" if c and bulk else "-"
            theirs = median("thrift1crate", operation + "_cpu")
            their_row = f"{theirs / int(rows) * 1e6:.2f} µs" if theirs else "-"
            print(f"| {label} | {c:.3f} | {wall:.3f} | {per_row} | {their_row} |" if c else f"| {label} | - | - | - | - |")
        in_mutate = median("hmap", "load_mutate_cpu")
        if in_mutate:
            print()
            print(
                f"Of the load's CPU, {in_mutate:.3f} s ({in_mutate / int(rows) * 1e6:.2f} µs a row) was spent inside "
                "Store::mutate, that is in hmap; the rest went to building and dropping the benchmark's rows."
            )
    if any(client == "hmap" and "@" in operation for client, operation in times):
        print()
        print("CPU seconds per operation, by process (medians): the client, the gateway it goes through, HBase;")
        print("on a machine of 2 cores, the sum over the wall time is how busy the chain kept it")
        print()
        print("| operation | client | wall | client CPU | gateway CPU | HBase CPU | sum | sum / wall |")
        print("|---|---|---|---|---|---|---|---|")
        gateways = {"hmap": "thrift2", "java": None, "happybase": "thrift1"}
        for operation, label in OPERATIONS:
            for client, gateway in gateways.items():
                wall = median(client, operation)
                if not wall:
                    continue
                parts = [
                    median(client, operation + "_cpu"),
                    median(client, f"{operation}@{gateway}") if gateway else 0.0,
                    median(client, f"{operation}@hbase"),
                ]
                shown = [f"{p:.2f}" if p is not None else "-" for p in parts]
                known = [p for p in parts if p is not None]
                total = sum(known)
                print(
                    f"| {label} | {client} | {wall:.3f} | "
                    + " | ".join(shown)
                    + f" | {total:.2f} | {total / wall:.2f} |"
                )


if __name__ == "__main__":
    main()
