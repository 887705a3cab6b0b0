// The native Java client's side of scripts/bench/compare: hbase-client 2.6.1
// (ZooKeeper and RPC, no gateway) doing the same work as hmap and happybase
// on the same rows. Run by `scripts/hbase/hbase java` with Java's
// single-file launcher:
//
//   JavaBench ROWS TABLE
//
// Prints one line per operation: `java<TAB>operation<TAB>seconds`.
import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import org.apache.hadoop.hbase.util.Bytes;

public class JavaBench {
    static final byte[] FAMILY = Bytes.toBytes("p");
    static final int GETS = 10_000;
    static final int MULTI = 100;

    // The rows, as scripts/bench/compare describes them.
    static byte[] key(int i) {
        long ts = 1_700_000_000_000L + i;
        return Bytes.add(Bytes.toBytes(String.format("u%04d", i % 1000)), Bytes.toBytes(Long.MAX_VALUE - ts));
    }

    static Put put(int i) {
        return new Put(key(i))
            .addColumn(FAMILY, Bytes.toBytes("item"), Bytes.toBytes(String.format("item-%06d", i % 50_000)))
            .addColumn(FAMILY, Bytes.toBytes("amount"), Bytes.toBytes((long) i * 37 % 100_000))
            .addColumn(FAMILY, Bytes.toBytes("qty"), Bytes.toBytes(1 + i % 9))
            .addColumn(FAMILY, Bytes.toBytes("shop"), Bytes.toBytes(String.format("shop-%04d", i % 700)))
            .addColumn(FAMILY, Bytes.toBytes("status"), Bytes.toBytes("paid"))
            .addColumn(FAMILY, Bytes.toBytes("note"), Bytes.toBytes(String.format("purchase record %08d, gift wrap: no", i)));
    }

    static int pick(int k, int rows) {
        return (int) ((long) k * 7919 % rows);
    }

    static long started;
    static java.util.Map<String, Double> serversAtStart = new java.util.LinkedHashMap<>();

    /** The CPU seconds so far of each process in HMAP_BENCH_SERVERS ("name=PID ..."), from /proc/PID/stat. */
    static java.util.Map<String, Double> serverCpuSeconds() {
        java.util.Map<String, Double> seconds = new java.util.LinkedHashMap<>();
        String servers = System.getenv().getOrDefault("HMAP_BENCH_SERVERS", "");
        for (String pair : servers.trim().split("\\s+")) {
            String[] parts = pair.split("=", 2);
            if (parts.length != 2) {
                continue;
            }
            try {
                String stat = new String(java.nio.file.Files.readAllBytes(java.nio.file.Paths.get("/proc", parts[1], "stat")));
                String[] fields = stat.substring(stat.lastIndexOf(')') + 1).trim().split("\\s+");
                seconds.put(parts[0], (Long.parseLong(fields[11]) + Long.parseLong(fields[12])) / 100.0);
            } catch (Exception e) {
                // A process that is gone is left out.
            }
        }
        return seconds;
    }

    static long cpuAtStart;

    /** This JVM's CPU time so far, all its threads (the client's, the JIT's, the collector's), in nanoseconds. */
    static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean())
            .getProcessCpuTime();
    }

    static void start() {
        serversAtStart = serverCpuSeconds();
        cpuAtStart = processCpuNanos();
        started = System.nanoTime();
    }

    static void report(String operation) {
        System.out.printf("java\t%s\t%.6f%n", operation, (System.nanoTime() - started) / 1e9);
        System.out.printf("java\t%s_cpu\t%.6f%n", operation, (processCpuNanos() - cpuAtStart) / 1e9);
        java.util.Map<String, Double> now = serverCpuSeconds();
        for (java.util.Map.Entry<String, Double> before : serversAtStart.entrySet()) {
            Double after = now.get(before.getKey());
            if (after != null) {
                System.out.printf("java\t%s@%s\t%.2f%n", operation, before.getKey(), after - before.getValue());
            }
        }
    }

    static void check(boolean ok, String what) {
        if (!ok) {
            throw new IllegalStateException("wrong result: " + what);
        }
    }

    static long scan(Table table, Scan scan) throws Exception {
        long cells = 0;
        try (ResultScanner scanner = table.getScanner(scan)) {
            for (Result r : scanner) {
                cells += r.size();
            }
        }
        return cells;
    }

    public static void main(String[] args) throws Exception {
        int rows = Integer.parseInt(args[0]);
        TableName name = TableName.valueOf(args[1]);
        var conf = HBaseConfiguration.create();
        try (var connection = ConnectionFactory.createConnection(conf); var admin = connection.getAdmin()) {
            if (admin.tableExists(name)) {
                admin.disableTable(name);
                admin.deleteTable(name);
            }
            admin.createTable(TableDescriptorBuilder.newBuilder(name)
                .setColumnFamily(ColumnFamilyDescriptorBuilder.of(FAMILY)).build());
            try (Table table = connection.getTable(name)) {
                start();
                List<Put> batch = new ArrayList<>(1000);
                for (int i = 0; i < rows; i++) {
                    batch.add(put(i));
                    if (batch.size() == 1000) {
                        table.put(batch);
                        batch = new ArrayList<>(1000);
                    }
                }
                if (!batch.isEmpty()) {
                    table.put(batch);
                }
                report("load");

                start();
                long cells = scan(table, new Scan().setCaching(1000));
                report("scan_tuned");
                check(cells == 6L * rows, "tuned scan: " + cells + " cells");
                start();
                cells = scan(table, new Scan());
                report("scan_default");
                check(cells == 6L * rows, "default scan: " + cells + " cells");

                start();
                for (int k = 0; k < GETS; k++) {
                    check(!table.get(new Get(key(pick(k, rows)))).isEmpty(), "get " + k);
                }
                report("get");

                start();
                for (int b = 0; b < GETS / MULTI; b++) {
                    List<Get> gets = new ArrayList<>(MULTI);
                    for (int k = b * MULTI; k < (b + 1) * MULTI; k++) {
                        gets.add(new Get(key(pick(k, rows))));
                    }
                    for (Result r : table.get(gets)) {
                        check(!r.isEmpty(), "multi-get " + b);
                    }
                }
                report("multiget");
            }
            admin.disableTable(name);
            admin.deleteTable(name);
        }
        System.exit(0);
    }
}
