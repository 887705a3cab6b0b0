// The address of the active master, for NativeStore's tests: the master
// and region servers listen on random ports (hbase.localcluster.assign.random.ports).
// Run by ./hbase address with Java's single-file launcher; prints
//
//   HMAP_NATIVE=host:port
//
// The master answers ClientMetaService (the connection registry), so this
// one address is all a native client needs to find hbase:meta and the
// region servers.
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.client.ConnectionFactory;

public class Address {
    public static void main(String[] args) throws Exception {
        var conf = HBaseConfiguration.create();
        try (var connection = ConnectionFactory.createConnection(conf); var admin = connection.getAdmin()) {
            var master = admin.getClusterMetrics().getMasterName();
            System.out.println("HMAP_NATIVE=" + master.getHostname() + ":" + master.getPort());
        }
        System.exit(0);
    }
}
