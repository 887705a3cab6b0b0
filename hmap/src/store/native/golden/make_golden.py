"""Writes the golden bytes that codec.rs's tests compare hmap's encoding with.

An independent encoder: Google's protobuf runtime, on classes that protoc
(from grpcio-tools) generates from HBase's own .proto files, read from
hbase-protocol-shaded-2.6.1.jar. The frames (length prefix, varint
delimiters, KeyValue cell blocks) are laid out by hand here, after HBase's
Java client (NettyRpcDuplexHandler, CellBlockBuilder, KeyValueCodec).

    python3 -m venv target/protovenv
    target/protovenv/bin/pip install grpcio-tools protobuf
    target/protovenv/bin/python hmap/src/store/native/golden/make_golden.py

The Rust tests only read the .bin files; they need neither Python nor protoc.
"""

import glob
import os
import struct
import subprocess
import sys
import tempfile
import zipfile

from google.protobuf.internal.encoder import _VarintBytes

HERE = os.path.dirname(os.path.abspath(__file__))
JAR = glob.glob(
    os.path.expanduser(
        "~/.m2/repository/org/apache/hbase/hbase-protocol-shaded/2.6.1/hbase-protocol-shaded-2.6.1.jar"
    )
)[0]
FILES = ["RPC.proto", "HBase.proto", "Client.proto", "Cell.proto", "Comparator.proto",
         "Filter.proto", "Registry.proto", "Tracing.proto", "MapReduce.proto"]

work = tempfile.mkdtemp()
with zipfile.ZipFile(JAR) as jar:
    for name in FILES:
        with open(os.path.join(work, name), "wb") as f:
            f.write(jar.read(name))
subprocess.check_call([sys.executable, "-m", "grpc_tools.protoc", "-I", work, "--python_out", work]
                      + [os.path.join(work, n) for n in FILES])
sys.path.insert(0, work)
import Client_pb2 as C  # noqa: E402
import HBase_pb2 as H  # noqa: E402
import RPC_pb2 as R  # noqa: E402
import Registry_pb2 as G  # noqa: E402


def write(name, data):
    with open(os.path.join(HERE, name + ".bin"), "wb") as f:
        f.write(data)


def delimited(msg):
    data = msg.SerializeToString()
    return _VarintBytes(len(data)) + data


def key_value(row, family, qualifier, ts, typ, value):
    key = struct.pack(">H", len(row)) + row + struct.pack(">B", len(family)) + family + qualifier \
        + struct.pack(">qB", ts, typ)
    kv = struct.pack(">II", len(key), len(value)) + key + value
    return struct.pack(">I", len(kv)) + kv


# The connection header hmap sends.
conn = R.ConnectionHeader()
conn.user_info.effective_user = "hmap"
conn.service_name = "ClientService"
conn.cell_block_codec_class = "org.apache.hadoop.hbase.codec.KeyValueCodec"
write("connection_header", conn.SerializeToString())

# A request header.
req = R.RequestHeader(call_id=7, method_name="Get", request_param=True, timeout=5000)
write("request_header", req.SerializeToString())

# A GetRequest with columns, a time range and versions.
get = C.GetRequest()
get.region.type = H.RegionSpecifier.REGION_NAME
get.region.value = b"t,,1700000000000.0123456789abcdef0123456789abcdef."
get.get.row = b"r\x00\xff1"
col = get.get.column.add()
col.family = b"f"
col.qualifier.extend([b"a", b"b"])
get.get.column.add().family = b"g"
get.get.time_range.__setattr__("from", 5)
get.get.time_range.to = 100
get.get.max_versions = 3
write("get_request", get.SerializeToString())

# The whole frame of that call: length, delimited header, delimited request.
body = delimited(req) + delimited(get)
write("get_request_frame", struct.pack(">I", len(body)) + body)

# A put and a delete of one row.
mut = C.MutateRequest()
mut.region.type = H.RegionSpecifier.REGION_NAME
mut.region.value = b"t,,1.x."
mut.mutation.row = b"row"
mut.mutation.mutate_type = C.MutationProto.PUT
cv = mut.mutation.column_value.add()
cv.family = b"f"
qv = cv.qualifier_value.add()
qv.qualifier = b"q"
qv.value = b"v"
qv = cv.qualifier_value.add()
qv.qualifier = b"r"
qv.value = b""
qv.timestamp = 42
write("mutate_put", mut.SerializeToString())
mut.mutation.mutate_type = C.MutationProto.DELETE
del mut.mutation.column_value[:]
cv = mut.mutation.column_value.add()
cv.family = b"f"
qv = cv.qualifier_value.add()
qv.qualifier = b"q"
qv.delete_type = C.MutationProto.DELETE_MULTIPLE_VERSIONS
qv.timestamp = 9
qv = cv.qualifier_value.add()
qv.delete_type = C.MutationProto.DELETE_FAMILY
write("mutate_delete", mut.SerializeToString())

# A scan response whose cells travel in a cell block.
scan = C.ScanResponse(scanner_id=42, more_results=True, more_results_in_region=True, mvcc_read_point=9)
scan.cells_per_result.extend([2, 1])
scan.results.add(associated_cell_count=2)
scan.results.add(associated_cell_count=1, partial=True)
scan.partial_flag_per_result.extend([False, True])
write("scan_response", scan.SerializeToString())
block = key_value(b"r1", b"f", b"a", 1700000000000, 4, b"va") \
    + key_value(b"r1", b"f", b"", 1, 4, b"") \
    + key_value(b"r2", b"g", b"q\xff", 0x7FFFFFFFFFFFFFFF, 4, b"x" * 300)
header = R.ResponseHeader(call_id=11)
header.cell_block_meta.length = len(block)
body = delimited(header) + delimited(scan) + block
write("scan_response_frame", struct.pack(">I", len(body)) + body)

# A reply that carries an exception.
header = R.ResponseHeader(call_id=3)
header.exception.exception_class_name = "org.apache.hadoop.hbase.NotServingRegionException"
header.exception.stack_trace = ("org.apache.hadoop.hbase.NotServingRegionException: "
                                "t,,1.x. is not online on 127.0.0.1,16020,1\n\tat A.b(C.java:1)\n")
header.exception.hostname = "127.0.0.1"
header.exception.port = 16020
header.exception.do_not_retry = False
write("response_header_exception", header.SerializeToString())
body = delimited(header)
write("exception_frame", struct.pack(">I", len(body)) + body)

# The registry's answer: where hbase:meta is.
meta = G.GetMetaRegionLocationsResponse()
loc = meta.meta_locations.add()
loc.region_info.region_id = 1
loc.region_info.table_name.namespace = b"hbase"
loc.region_info.table_name.qualifier = b"meta"
loc.region_info.start_key = b""
loc.region_info.end_key = b""
loc.server_name.host_name = "127.0.0.1"
loc.server_name.port = 36821
loc.server_name.start_code = 1795413235583
loc.seq_num = 0
write("meta_locations", meta.SerializeToString())
print("wrote", sorted(os.listdir(HERE)))
