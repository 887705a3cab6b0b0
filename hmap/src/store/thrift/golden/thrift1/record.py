#!/usr/bin/env python3
"""Records the golden Thrift1 replies of hbase1.rs's tests from a real
Thrift1 gateway (binary protocol, unframed): HBase 2.6.1's `hbase thrift`,
as `scripts/hbase/hbase start` runs it.

    HMAP_THRIFT1=127.0.0.1:9090 python3 record.py

It creates the table `t1_golden` (deleting one left over), writes a few
cells at fixed timestamps, saves the replies as `<name>.bin` next to this
file, and deletes the table. The calls are written by hand, field ids from
Hbase.thrift in hbase-thrift-2.6.1.jar.
"""
import os
import socket
import struct
import sys

STOP, BOOL, BYTE, I32, I64, STRING, STRUCT, MAP, LIST = 0, 2, 3, 8, 10, 11, 12, 13, 15
HERE = os.path.dirname(os.path.abspath(__file__))
TABLE = b"t1_golden"


def string(b):
    return struct.pack(">i", len(b)) + b


def field(kind, fid, payload):
    return struct.pack(">bh", kind, fid) + payload


def strings(items):
    return struct.pack(">bi", STRING, len(items)) + b"".join(string(i) for i in items)


class Gateway:
    def __init__(self, address):
        host, port = address.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)))
        self.seq = 0

    def read_exact(self, n):
        out = b""
        while len(out) < n:
            chunk = self.sock.recv(n - len(out))
            if not chunk:
                raise EOFError
            out += chunk
        return out

    def skip(self, kind):
        if kind in (BOOL, BYTE):
            return self.read_exact(1)
        if kind == I32:
            return self.read_exact(4)
        if kind == I64:
            return self.read_exact(8)
        if kind == STRING:
            head = self.read_exact(4)
            return head + self.read_exact(struct.unpack(">i", head)[0])
        if kind == STRUCT:
            out = b""
            while True:
                t = self.read_exact(1)
                out += t
                if t[0] == STOP:
                    return out
                out += self.read_exact(2) + self.skip(t[0])
        if kind in (LIST,):
            head = self.read_exact(5)
            out = head
            for _ in range(struct.unpack(">i", head[1:])[0]):
                out += self.skip(head[0])
            return out
        if kind == MAP:
            head = self.read_exact(6)
            out = head
            for _ in range(struct.unpack(">i", head[2:])[0]):
                out += self.skip(head[0]) + self.skip(head[1])
            return out
        raise ValueError(kind)

    def call(self, name, args):
        self.seq += 1
        msg = struct.pack(">I", 0x80010001) + string(name.encode()) + struct.pack(">i", self.seq)
        self.sock.sendall(msg + args + b"\0")
        # The reply: version and type, the name, the sequence id, the result.
        version = self.read_exact(4)
        name_len = self.read_exact(4)
        reply = version + name_len + self.read_exact(struct.unpack(">i", name_len)[0]) + self.read_exact(4)
        return reply + self.skip(STRUCT)


def main():
    address = os.environ.get("HMAP_THRIFT1") or sys.exit("set HMAP_THRIFT1=host:port")
    g = Gateway(address)
    table = field(STRING, 1, string(TABLE))

    def save(name, reply):
        with open(os.path.join(HERE, name + ".bin"), "wb") as f:
            f.write(reply)

    names = g.call("getTableNames", b"")
    if string(TABLE) in names:
        g.call("disableTable", table)
        g.call("deleteTable", table)
    descriptor = lambda name, versions: (
        field(STRING, 1, string(name)) + field(I32, 2, struct.pack(">i", versions))
        + field(STRING, 3, string(b"NONE")) + field(BOOL, 4, b"\0")
        + field(STRING, 5, string(b"ROW")) + field(BOOL, 8, b"\1")
        + field(I32, 9, struct.pack(">i", 2147483647)) + b"\0")
    families = struct.pack(">bi", STRUCT, 2) + descriptor(b"a", 3) + descriptor(b"b", 1)
    g.call("createTable", table + field(LIST, 2, families))
    save("create_table_exists", g.call("createTable", table + field(LIST, 2, families)))

    def put(column, value):
        return field(BOOL, 1, b"\0") + field(STRING, 2, string(column)) + field(STRING, 3, string(value)) + field(BOOL, 4, b"\1") + b"\0"

    def batch(row, mutations):
        return field(STRING, 1, string(row)) + field(LIST, 2, struct.pack(">bi", STRUCT, len(mutations)) + b"".join(mutations)) + b"\0"

    for ts, value in ((5, b"old"), (7, b"new")):
        rows = struct.pack(">bi", STRUCT, 2) + batch(b"r1", [put(b"a:q", value), put(b"b:", b"\xff\x00")]) + batch(b"r2", [put(b"a:q", b"two")])
        g.call("mutateRowsTs", table + field(LIST, 2, rows) + field(I64, 3, struct.pack(">q", ts)))
    save("get_row", g.call("getRowWithColumnsTs", table + field(STRING, 2, string(b"r1")) + field(I64, 4, struct.pack(">q", 2**63 - 1))))
    save("get_row_missing", g.call("getRowWithColumnsTs", table + field(STRING, 2, string(b"none")) + field(I64, 4, struct.pack(">q", 2**63 - 1))))
    save("get_versions", g.call("getVerTs", table + field(STRING, 2, string(b"r1")) + field(STRING, 3, string(b"a:q")) + field(I64, 4, struct.pack(">q", 2**63 - 1)) + field(I32, 5, struct.pack(">i", 3))))
    scan = field(STRUCT, 2, field(BOOL, 8, b"\1") + b"\0")
    opened = g.call("scannerOpenWithScan", table + scan)
    save("scanner_open", opened)
    scanner_id = opened[-5:-1]
    save("scanner_rows", g.call("scannerGetList", field(I32, 1, scanner_id) + field(I32, 2, struct.pack(">i", 10))))
    g.call("scannerClose", field(I32, 1, scanner_id))
    save("scanner_closed", g.call("scannerGetList", field(I32, 1, scanner_id) + field(I32, 2, struct.pack(">i", 10))))
    save("column_descriptors", g.call("getColumnDescriptors", table))
    save("table_regions", g.call("getTableRegions", table))
    save("increment", g.call("atomicIncrement", table + field(STRING, 2, string(b"c")) + field(STRING, 3, string(b"b:n")) + field(I64, 4, struct.pack(">q", 7))))
    save("check_and_put_false", g.call("checkAndPut", table + field(STRING, 2, string(b"r1")) + field(STRING, 3, string(b"a:q")) + field(STRING, 5, string(b"nope")) + field(STRUCT, 6, put(b"a:x", b"y"))))
    save("missing_table_io_error", g.call("getColumnDescriptors", field(STRING, 1, string(b"t1_golden_never_created"))))
    g.call("disableTable", table)
    g.call("deleteTable", table)


if __name__ == "__main__":
    main()
