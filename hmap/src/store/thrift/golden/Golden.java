// Writes the golden Thrift messages of hmap's codec tests with HBase's own
// generated Thrift2 classes and the Thrift library the gateway runs
// (hbase-thrift 2.6.1, libthrift 0.14.1): replies as the gateway writes them,
// and calls as a Java client would write them, each in the binary protocol
// (`NAME.bin`) and the compact one (`compact/NAME.bin`). `generate.sh`
// compiles and runs it; the `.bin` files it writes are checked in.
import java.io.FileOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import org.apache.hadoop.hbase.thrift2.generated.*;
import org.apache.thrift.TApplicationException;
import org.apache.thrift.TBase;
import org.apache.thrift.protocol.TBinaryProtocol;
import org.apache.thrift.protocol.TCompactProtocol;
import org.apache.thrift.protocol.TMessage;
import org.apache.thrift.protocol.TMessageType;
import org.apache.thrift.protocol.TProtocol;
import org.apache.thrift.transport.TMemoryBuffer;

public class Golden {
  static String dir;

  static ByteBuffer b(String s) {
    return ByteBuffer.wrap(s.getBytes(StandardCharsets.UTF_8));
  }

  interface Body {
    void write(TProtocol p) throws Exception;
  }

  static void write(String file, String method, byte type, TBase<?, ?> body) throws Exception {
    write(file, method, type, (Body) body::write);
  }

  static void write(String file, String method, byte type, Body body) throws Exception {
    for (boolean compact : new boolean[] {false, true}) {
      TMemoryBuffer buf = new TMemoryBuffer(256);
      TProtocol p = compact ? new TCompactProtocol(buf) : new TBinaryProtocol(buf);
      p.writeMessageBegin(new TMessage(method, type, 1));
      body.write(p);
      p.writeMessageEnd();
      String path = dir + (compact ? "/compact/" : "/") + file + ".bin";
      try (FileOutputStream out = new FileOutputStream(path)) {
        out.write(Arrays.copyOf(buf.getArray(), buf.length()));
      }
    }
  }

  static void reply(String file, String method, TBase<?, ?> result) throws Exception {
    write(file, method, TMessageType.REPLY, result);
  }

  static void call(String file, String method, TBase<?, ?> args) throws Exception {
    write(file, method, TMessageType.CALL, args);
  }

  static TColumnValue cell(String f, String q, String v, long ts) {
    return new TColumnValue(b(f), b(q), b(v)).setTimestamp(ts);
  }

  public static void main(String[] args) throws Exception {
    dir = args[0];

    // get: a row of two cells; the first carries tags and a type (fields 5
    // and 6) and the result stale and partial flags (3 and 4), which hmap
    // does not read and must skip.
    TResult row = new TResult(Arrays.asList(
        cell("cf", "a", "1", 100).setTags(b("tag")).setType((byte) 4),
        cell("cf", "b", "", 200)))
        .setRow(b("row1")).setStale(false).setPartial(false);
    reply("get_row", "get", new THBaseService.get_result().setSuccess(row));
    // get of a missing row: an empty TResult.
    reply("get_empty", "get", new THBaseService.get_result().setSuccess(new TResult(Arrays.asList())));
    // get on a missing table, as a region server's exception reaches the gateway.
    reply("get_io_error", "get", new THBaseService.get_result().setIo(
        new TIOError().setMessage("org.apache.hadoop.hbase.TableNotFoundException: t\n\tat Somewhere.java:1").setCanRetry(false)));
    // getMultiple: one row found, one missing.
    reply("get_multiple", "getMultiple", new THBaseService.getMultiple_result().setSuccess(Arrays.asList(
        new TResult(Arrays.asList(cell("f", "q", "v1", 5))).setRow(b("r1")),
        new TResult(Arrays.asList()))));
    reply("check_and_mutate_true", "checkAndMutate", new THBaseService.checkAndMutate_result().setSuccess(true));
    reply("table_exists_false", "tableExists", new THBaseService.tableExists_result().setSuccess(false));
    reply("server_type", "getThriftServerType",
        new THBaseService.getThriftServerType_result().setSuccess(TThriftServerType.TWO));
    reply("open_scanner", "openScanner", new THBaseService.openScanner_result().setSuccess(42));
    reply("scanner_rows_illegal", "getScannerRows", new THBaseService.getScannerRows_result().setIa(
        new TIllegalArgument().setMessage("Invalid scanner Id")));
    reply("put_multiple", "putMultiple", new THBaseService.putMultiple_result());
    TColumnFamilyDescriptor cf = new TColumnFamilyDescriptor(b("cf"))
        .setBlockSize(32768).setBloomnFilterType(TBloomFilterType.ROWCOL)
        .setCompressionType(TCompressionAlgorithm.SNAPPY).setMaxVersions(3).setMinVersions(1)
        .setTimeToLive(86400).setBlockCacheEnabled(false).setInMemory(true)
        .setDataBlockEncoding(TDataBlockEncoding.FAST_DIFF).setDfsReplication((short) 3)
        .setKeepDeletedCells(TKeepDeletedCells.FALSE).setScope(0);
    cf.putToAttributes(b("METADATA"), b("x"));
    cf.putToConfiguration("hbase.hstore.blockingStoreFiles", "20");
    TColumnFamilyDescriptor other = new TColumnFamilyDescriptor(b("a")).setMaxVersions(1);
    TTableDescriptor descriptor = new TTableDescriptor(new TTableName(b("user")).setNs(b("default")))
        .setColumns(Arrays.asList(cf, other)).setDurability(TDurability.SYNC_WAL);
    descriptor.putToAttributes(b("OWNER"), b("me"));
    reply("table_descriptor", "getTableDescriptor",
        new THBaseService.getTableDescriptor_result().setSuccess(descriptor));
    reply("region_locations", "getAllRegionLocations", new THBaseService.getAllRegionLocations_result().setSuccess(
        Arrays.asList(
            new THRegionLocation(new TServerName("host").setPort(16020).setStartCode(7),
                new THRegionInfo(1, b("t")).setEndKey(b("m"))),
            new THRegionLocation(new TServerName("host").setPort(16020),
                new THRegionInfo(2, b("t")).setStartKey(b("m")).setEndKey(b(""))))));
    reply("delete_multiple_failed", "deleteMultiple", new THBaseService.deleteMultiple_result().setSuccess(
        Arrays.asList(new TDelete(b("r9")).setColumns(Arrays.asList(new TColumn(b("f")).setQualifier(b("q")))))));
    reply("table_names", "getTableNamesByPattern", new THBaseService.getTableNamesByPattern_result().setSuccess(
        Arrays.asList(new TTableName(b("a")).setNs(b("default")), new TTableName(b("b")).setNs(b("app")),
            new TTableName(b("c")))));
    // increment of c:y then c:x: the reply's cells are sorted by column.
    reply("increment", "increment", new THBaseService.increment_result().setSuccess(
        new TResult(Arrays.asList(
            new TColumnValue(b("c"), b("x"), ByteBuffer.wrap(new byte[] {0, 0, 0, 0, 0, 0, 0, 7})).setTimestamp(9),
            new TColumnValue(b("c"), b("y"), ByteBuffer.wrap(new byte[] {-1, -1, -1, -1, -1, -1, -1, -2})).setTimestamp(9)))
            .setRow(b("r"))));
    TApplicationException unknown =
        new TApplicationException(TApplicationException.UNKNOWN_METHOD, "Invalid method name: 'get'");
    write("application_exception", "get", TMessageType.EXCEPTION, (Body) unknown::write);

    // Calls, as hmap must write them.
    TGet get = new TGet(b("r"))
        .setColumns(Arrays.asList(new TColumn(b("f")).setQualifier(b("q")), new TColumn(b("g"))))
        .setTimeRange(new TTimeRange(10, 20)).setMaxVersions(3);
    call("call_get", "get", new THBaseService.get_args(b("t"), get));
    TScan scan = new TScan().setStartRow(b("a")).setStopRow(b("z"))
        .setColumns(Arrays.asList(new TColumn(b("f")))).setCaching(100).setMaxVersions(2)
        .setTimeRange(new TTimeRange(0, 5)).setReversed(true);
    call("call_open_scanner", "openScanner", new THBaseService.openScanner_args(b("t"), scan));
    TPut put = new TPut(b("r"), Arrays.asList(cell("f", "q", "v", 5), new TColumnValue(b("f"), b("p"), b("w"))));
    call("call_put_multiple", "putMultiple", new THBaseService.putMultiple_args(b("t"), Arrays.asList(put)));
    TDelete delete = new TDelete(b("r"))
        .setColumns(Arrays.asList(new TColumn(b("f")).setQualifier(b("q")).setTimestamp(5)))
        .setDeleteType(TDeleteType.DELETE_COLUMN);
    call("call_delete_multiple", "deleteMultiple", new THBaseService.deleteMultiple_args(b("t"), Arrays.asList(delete)));
    TRowMutations mutations = new TRowMutations(b("r"), Arrays.asList(
        TMutation.put(new TPut(b("r"), Arrays.asList(cell("f", "q", "v", 5)))),
        TMutation.deleteSingle(new TDelete(b("r")).setColumns(Arrays.asList(new TColumn(b("f")).setQualifier(b("o"))))
            .setDeleteType(TDeleteType.DELETE_COLUMNS))));
    call("call_check_and_mutate_absent", "checkAndMutate", new THBaseService.checkAndMutate_args(
        b("t"), b("r"), b("f"), b("ver"), TCompareOp.EQUAL, b(""), mutations));
    TIncrement increment = new TIncrement(b("r"), Arrays.asList(
        new TColumnIncrement(b("c"), b("y")).setAmount(-3), new TColumnIncrement(b("c"), b("x")).setAmount(7)))
        .setReturnResults(true);
    call("call_increment", "increment", new THBaseService.increment_args(b("t"), increment));
  }
}
