// Requests per region server, from the master's cluster metrics (the admin
// API; the Maven jars carry no web UI, so no /jmx). Run by ./hbase metrics
// with Java's single-file launcher:
//
//   metrics [TABLE]   one line per live region server, tab-separated:
//                     server, regions, read requests, write requests
//                     (of TABLE's regions only, when given)
//
// The counts are the region servers' own, since the regions opened.
import java.util.TreeMap;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.ServerMetrics;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.RegionInfo;

public class Metrics {
    public static void main(String[] args) throws Exception {
        var conf = HBaseConfiguration.create();
        String table = args.length > 0 ? args[0] : null;
        try (var connection = ConnectionFactory.createConnection(conf); var admin = connection.getAdmin()) {
            var servers = new TreeMap<String, long[]>();
            for (var entry : admin.getClusterMetrics().getLiveServerMetrics().entrySet()) {
                ServerMetrics metrics = entry.getValue();
                long[] sums = new long[3];
                for (var region : metrics.getRegionMetrics().values()) {
                    String name = RegionInfo.getTable(region.getRegionName()).getNameAsString();
                    if (table != null && !table.equals(name)) {
                        continue;
                    }
                    sums[0] += 1;
                    sums[1] += region.getReadRequestCount();
                    sums[2] += region.getWriteRequestCount();
                }
                servers.put(entry.getKey().getServerName(), sums);
            }
            for (var entry : servers.entrySet()) {
                long[] s = entry.getValue();
                System.out.println(entry.getKey() + "\t" + s[0] + "\t" + s[1] + "\t" + s[2]);
            }
        }
        System.exit(0);
    }
}
