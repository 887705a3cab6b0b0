"""Reads a table hmap wrote, through HBase's Thrift1 gateway with happybase,
and writes one row the way Java's Bytes.toBytes encodes values.

Usage: happybase_check.py HOST PORT TABLE
Prints one JSON object: the table's families as happybase describes them,
and every row with its cells, keys and values in hex.
"""

import json
import struct
import sys

import happybase


def main() -> None:
    host, port, table_name = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    connection = happybase.Connection(host, port=port, timeout=60000)
    table = connection.table(table_name)
    families = {
        name.decode(): {k: (v.decode() if isinstance(v, bytes) else v) for k, v in options.items()}
        for name, options in table.families().items()
    }
    rows = [
        {"key": key.hex(), "cells": {column.decode("latin-1"): value.hex() for column, value in data.items()}}
        for key, data in table.scan()
    ]
    # A row as a Java client would write it: int, double, boolean and long
    # through Bytes.toBytes, the name as UTF-8.
    table.put(
        b"py-1",
        {
            b"i:n": "Zhang San".encode(),
            b"i:age": struct.pack(">i", 41),
            b"i:score": struct.pack(">d", 2.5),
            b"i:vip": b"\xff",
            b"i:visits": struct.pack(">q", 123456789012),
        },
    )
    connection.close()
    print(json.dumps({"families": families, "rows": rows}))


if __name__ == "__main__":
    main()
