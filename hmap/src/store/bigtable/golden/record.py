"""Records ReadRows replies of the Bigtable emulator as golden bytes.

Writes rows through Google's own Python client (google-cloud-bigtable), reads
them back with its low-level ReadRows call, and saves each ReadRowsResponse
as the bytes the Python protobuf encoder gives it: an encoder other than
prost, for read.rs's tests and the decode_bigtable_rows fuzz target's seeds.

    python3 -m venv /tmp/btenv && /tmp/btenv/bin/pip install google-cloud-bigtable
    export $(scripts/bigtable/emulator start)
    BIGTABLE_EMULATOR_HOST=$HMAP_BIGTABLE /tmp/btenv/bin/python \
        hmap/src/store/bigtable/golden/record.py hmap/src/store/bigtable/golden

What is written (each read of the table returns exactly this):
  row "a": f:q1 at 2000 ms "v2", f:q1 at 1000 ms "v1", f:q2 at 1000 ms "x",
           g:q at 3000 ms (a value of 20,000 bytes of b"z")
  row "b": f:q1 at 1000 ms "" (empty value)
  row "c\\x00\\xff": g:q at 5000 ms "last"
Timestamps go as HBase's Java adapter writes them: milliseconds times 1000.
"""
import os
import sys

from google.cloud import bigtable
from google.cloud.bigtable import column_family
from google.cloud.bigtable_v2.services.bigtable import BigtableClient
from google.cloud.bigtable_v2.types import ReadRowsRequest, ReadRowsResponse

out = sys.argv[1]
client = bigtable.Client(project="hmap", admin=True)
instance = client.instance("hmap")
table = instance.table("golden")
if table.exists():
    table.delete()
table.create(column_families={"f": column_family.MaxVersionsGCRule(5), "g": column_family.MaxVersionsGCRule(5)})


def put(key, cells):
    row = table.direct_row(key)
    for family, qualifier, millis, value in cells:
        import datetime
        at = datetime.datetime.fromtimestamp(millis / 1000, tz=datetime.timezone.utc)
        row.set_cell(family, qualifier, value, timestamp=at)
    row.commit()


put(b"a", [("f", b"q1", 1000, b"v1"), ("f", b"q1", 2000, b"v2"), ("f", b"q2", 1000, b"x"), ("g", b"q", 3000, b"z" * 20000)])
put(b"b", [("f", b"q1", 1000, b"")])
put(b"c\x00\xff", [("g", b"q", 5000, b"last")])

data = BigtableClient(transport=client.table_data_client.transport)
request = ReadRowsRequest(table_name=table.name)
for i, response in enumerate(data.read_rows(request=request)):
    path = os.path.join(out, f"read_rows_{i}.bin")
    with open(path, "wb") as f:
        f.write(ReadRowsResponse.serialize(response))
    print(path, len(response.chunks), "chunks")
table.delete()
