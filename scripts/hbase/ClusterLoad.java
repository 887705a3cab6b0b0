// A write load through HBase's own Java client, with its default settings:
// the reference a chaos test compares hmap with. Run with the cluster's
// classpath and configuration:
//
//   scripts/hbase/cluster java scripts/hbase/ClusterLoad.java [--rows N] [--batch N] [--offset N]
//       [--table NAME] [--regions N] [--value-size N] [--verify-only]
//
// Writes rows OFFSET .. OFFSET+N-1 (keys row%010d, one cell f:q each, a value
// made from the row's number) in batches (Table.put of a list: one call,
// acknowledged or failed as a whole), to table NAME, created with one family
// `f` if missing (--regions N: pre-split into N regions over those keys).
// Each acknowledged batch is recorded; a failed call is counted and not
// retried. Then every acknowledged row is read back (Gets in batches), and a
// row missing or with another value is lost. --verify-only reads rows
// OFFSET .. OFFSET+N-1 back without writing (each counted as acknowledged).
//
// Progress every 10 s on stderr (`progress acknowledged=... failed_calls=...`),
// then one line on stdout, key=value pairs separated by spaces:
//
//   table=load rows=200000 offset=0 batch=500 acknowledged=200000 failed_calls=0 failed_rows=0
//   longest_stall_ms=18800 stall_from_ms=<epoch ms> stall_to_ms=<epoch ms> write_ms=61234
//   verified=200000 lost=0
//
// (on one line). A stall is the time between two successive acknowledged
// batches (the first from the start of the writes); stall_from_ms and
// stall_to_ms are the longest's ends, in milliseconds since the epoch, for
// comparing with the times `cluster kill` prints. The first lost rows go to
// stderr (`lost row=...`). Exit status: 0 when nothing is lost, 1 when rows
// are lost or cannot be read back, 2 for a usage error.
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.*;
import org.apache.hadoop.hbase.util.Bytes;

public class ClusterLoad {
    static final byte[] F = Bytes.toBytes("f"), Q = Bytes.toBytes("q");

    static byte[] key(long i) {
        return Bytes.toBytes(String.format("row%010d", i));
    }

    static byte[] value(long i, int size) {
        var s = new StringBuilder("v").append(i).append('-');
        while (s.length() < size) {
            s.append((char) ('a' + (i + s.length()) % 26));
        }
        return Bytes.toBytes(s.toString());
    }

    static void usage(String why) {
        System.err.println("ClusterLoad: " + why);
        System.err.println("usage: ClusterLoad [--rows N] [--batch N] [--offset N] [--table NAME] [--regions N] "
            + "[--value-size N] [--verify-only]");
        System.exit(2);
    }

    public static void main(String[] args) throws Exception {
        int rows = 200_000, batch = 500, regions = 1, valueSize = 32;
        long offset = 0;
        String tableName = "load";
        boolean verifyOnly = false;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--verify-only")) {
                verifyOnly = true;
                continue;
            }
            if (i + 1 >= args.length) {
                usage(a + " takes a value");
            }
            String v = args[++i];
            try {
                switch (a) {
                    case "--rows" -> rows = Integer.parseInt(v);
                    case "--batch" -> batch = Integer.parseInt(v);
                    case "--offset" -> offset = Long.parseLong(v);
                    case "--table" -> tableName = v;
                    case "--regions" -> regions = Integer.parseInt(v);
                    case "--value-size" -> valueSize = Integer.parseInt(v);
                    default -> usage("unknown option " + a);
                }
            } catch (NumberFormatException e) {
                usage(a + " takes a number, not " + v);
            }
        }
        if (rows < 0 || batch < 1 || regions < 1) {
            usage("--rows from 0, --batch and --regions from 1");
        }
        var conf = HBaseConfiguration.create();
        var name = TableName.valueOf(tableName);
        var acknowledged = new BitSet(rows);
        long failedCalls = 0, failedRows = 0, longestStall = 0, stallFrom = 0, stallTo = 0, writeMs = 0;
        try (var connection = ConnectionFactory.createConnection(conf)) {
            if (!verifyOnly) {
                try (var admin = connection.getAdmin()) {
                    if (!admin.tableExists(name)) {
                        var descriptor = TableDescriptorBuilder.newBuilder(name)
                            .setColumnFamily(ColumnFamilyDescriptorBuilder.of(F)).build();
                        if (regions > 1) {
                            byte[][] splits = new byte[regions - 1][];
                            for (int r = 1; r < regions; r++) {
                                splits[r - 1] = key(offset + (long) rows * r / regions);
                            }
                            admin.createTable(descriptor, splits);
                        } else {
                            admin.createTable(descriptor);
                        }
                    }
                }
            }
            try (var table = connection.getTable(name)) {
                long start = System.currentTimeMillis(), last = start, lastProgress = start;
                if (verifyOnly) {
                    acknowledged.set(0, rows);
                }
                for (int first = 0; first < rows && !verifyOnly; first += batch) {
                    int count = Math.min(batch, rows - first);
                    var puts = new ArrayList<Put>(count);
                    for (int j = 0; j < count; j++) {
                        long row = offset + first + j;
                        puts.add(new Put(key(row)).addColumn(F, Q, value(row, valueSize)));
                    }
                    try {
                        table.put(puts);
                        long now = System.currentTimeMillis();
                        acknowledged.set(first, first + count);
                        if (now - last > longestStall) {
                            longestStall = now - last;
                            stallFrom = last;
                            stallTo = now;
                        }
                        last = now;
                    } catch (Exception e) {
                        failedCalls++;
                        failedRows += count;
                        System.err.println("failed call rows=" + (offset + first) + ".." + (offset + first + count - 1)
                            + ": " + e.toString().split("\n")[0]);
                    }
                    long now = System.currentTimeMillis();
                    if (now - lastProgress >= 10_000) {
                        System.err.println("progress acknowledged=" + acknowledged.cardinality() + " failed_calls="
                            + failedCalls + " current_stall_ms=" + (now - last) + " longest_stall_ms=" + longestStall);
                        lastProgress = now;
                    }
                }
                writeMs = System.currentTimeMillis() - start;

                long verified = 0, lost = 0;
                var gets = new ArrayList<Get>(batch);
                var numbers = new ArrayList<Long>(batch);
                for (int i = acknowledged.nextSetBit(0); i >= 0; i = acknowledged.nextSetBit(i + 1)) {
                    gets.add(new Get(key(offset + i)).addColumn(F, Q));
                    numbers.add(offset + i);
                    if (gets.size() == batch || acknowledged.nextSetBit(i + 1) < 0) {
                        Result[] results;
                        try {
                            results = table.get(gets);
                        } catch (Exception e) {
                            System.err.println("ClusterLoad: reading back rows from " + numbers.get(0) + " failed: " + e);
                            System.out.println(summary(name, rows, offset, batch, acknowledged.cardinality(), failedCalls,
                                failedRows, longestStall, stallFrom, stallTo, writeMs, verified, lost) + " unverified="
                                + (acknowledged.cardinality() - verified - lost));
                            System.exit(1);
                            return;
                        }
                        for (int j = 0; j < results.length; j++) {
                            long row = numbers.get(j);
                            byte[] got = results[j].getValue(F, Q);
                            if (got != null && Bytes.equals(got, value(row, valueSize))) {
                                verified++;
                            } else {
                                if (lost < 20) {
                                    System.err.println("lost row=" + Bytes.toString(key(row)) + " read="
                                        + (got == null ? "nothing" : Bytes.toStringBinary(got)));
                                }
                                lost++;
                            }
                        }
                        gets.clear();
                        numbers.clear();
                    }
                }
                System.out.println(summary(name, rows, offset, batch, acknowledged.cardinality(), failedCalls, failedRows,
                    longestStall, stallFrom, stallTo, writeMs, verified, lost));
                System.out.flush();
                Runtime.getRuntime().halt(lost == 0 ? 0 : 1);
            }
        }
    }

    static String summary(TableName name, int rows, long offset, int batch, long acknowledged, long failedCalls,
            long failedRows, long stall, long from, long to, long writeMs, long verified, long lost) {
        return "table=" + name + " rows=" + rows + " offset=" + offset + " batch=" + batch + " acknowledged="
            + acknowledged + " failed_calls=" + failedCalls + " failed_rows=" + failedRows + " longest_stall_ms=" + stall
            + " stall_from_ms=" + from + " stall_to_ms=" + to + " write_ms=" + writeMs + " verified=" + verified
            + " lost=" + lost;
    }
}
