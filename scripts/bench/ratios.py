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


if __name__ == "__main__":
    main()
