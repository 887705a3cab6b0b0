// Readiness probe: a table round trip through the HBase client. Run by
// ./hbase start with Java's single-file launcher; exits 0 when HBase works.
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.*;
import org.apache.hadoop.hbase.util.Bytes;

public class Probe {
    public static void main(String[] args) throws Exception {
        var conf = HBaseConfiguration.create();
        var name = TableName.valueOf("hmap_probe");
        byte[] f = Bytes.toBytes("f"), q = Bytes.toBytes("q"), row = Bytes.toBytes("r");
        try (var connection = ConnectionFactory.createConnection(conf); var admin = connection.getAdmin()) {
            if (admin.tableExists(name)) {
                admin.disableTable(name);
                admin.deleteTable(name);
            }
            admin.createTable(TableDescriptorBuilder.newBuilder(name)
                .setColumnFamily(ColumnFamilyDescriptorBuilder.of(f)).build());
            try (var table = connection.getTable(name)) {
                table.put(new Put(row).addColumn(f, q, Bytes.toBytes("ok")));
                var value = Bytes.toString(table.get(new Get(row)).getValue(f, q));
                if (!"ok".equals(value)) {
                    System.err.println("probe read back " + value);
                    System.exit(1);
                }
            }
            admin.disableTable(name);
            admin.deleteTable(name);
        }
        System.exit(0);
    }
}
