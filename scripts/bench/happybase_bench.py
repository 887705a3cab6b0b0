"""happybase's side of scripts/bench/compare: HBase's Thrift1 client for
Python doing the same work as hmap and the Java client on the same rows.

    happybase_bench.py HOST:PORT ROWS TABLE

Prints one line per operation: `happybase<TAB>operation<TAB>seconds`.
"""

import os
import struct
import sys
import time

import happybase

GETS = 10_000
MULTI = 100
LONG_MAX = (1 << 63) - 1


def key(i):
    ts = 1_700_000_000_000 + i
    return b"u%04d" % (i % 1000) + struct.pack(">q", LONG_MAX - ts)


def cells(i):
    return {
        b"p:item": b"item-%06d" % (i % 50_000),
        b"p:amount": struct.pack(">q", i * 37 % 100_000),
        b"p:qty": struct.pack(">i", 1 + i % 9),
        b"p:shop": b"shop-%04d" % (i % 700),
        b"p:status": b"paid",
        b"p:note": b"purchase record %08d, gift wrap: no" % i,
    }


def server_cpu_seconds():
    """The CPU seconds so far of each process in HMAP_BENCH_SERVERS
    ("name=PID ..."), from /proc/PID/stat (user and system, all threads)."""
    seconds = {}
    for pair in os.environ.get("HMAP_BENCH_SERVERS", "").split():
        name, _, pid = pair.partition("=")
        try:
            with open(f"/proc/{pid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        seconds[name] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return seconds


def pick(k, rows):
    return k * 7919 % rows


def main():
    host, port = sys.argv[1].rsplit(":", 1)
    rows = int(sys.argv[2])
    name = sys.argv[3]
    connection = happybase.Connection(host, int(port), timeout=600_000)
    if name.encode() in connection.tables():
        connection.delete_table(name, disable=True)
    connection.create_table(name, {"p": dict()})
    table = connection.table(name)

    def timed(operation, work):
        servers = server_cpu_seconds()
        cpu = time.process_time()
        started = time.perf_counter()
        work()
        print(f"happybase\t{operation}\t{time.perf_counter() - started:.6f}", flush=True)
        print(f"happybase\t{operation}_cpu\t{time.process_time() - cpu:.6f}", flush=True)
        now = server_cpu_seconds()
        for name, before in servers.items():
            if name in now:
                print(f"happybase\t{operation}@{name}\t{now[name] - before:.2f}", flush=True)

    def load():
        with table.batch(batch_size=1000) as batch:
            for i in range(rows):
                batch.put(key(i), cells(i))

    def scan(**options):
        def run():
            count = sum(len(data) for _, data in table.scan(**options))
            if count != 6 * rows:
                raise SystemExit(f"wrong result: scan read {count} cells")
        return run

    def gets():
        for k in range(GETS):
            if not table.row(key(pick(k, rows))):
                raise SystemExit(f"wrong result: get {k}")

    def multigets():
        for b in range(GETS // MULTI):
            found = table.rows([key(pick(k, rows)) for k in range(b * MULTI, (b + 1) * MULTI)])
            if len(found) != MULTI:
                raise SystemExit(f"wrong result: multi-get {b}")

    timed("load", load)
    timed("scan_tuned", scan(batch_size=1000))
    timed("scan_default", scan())
    timed("get", gets)
    timed("multiget", multigets)
    connection.delete_table(name, disable=True)


if __name__ == "__main__":
    main()
