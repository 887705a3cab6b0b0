// Writes filters.txt: each filter of native/filter.rs's golden test as
// HBase 2.6.1's Java client serializes it (ProtobufUtil.toFilter(f)
// .toByteArray(), the `Filter` message a Get or Scan carries), in hex.
// Run: HMAP_HBASE_DIR=/tmp/hb-shared scripts/hbase/hbase java \
//        hmap/src/store/native/testdata/FilterGolden.java > hmap/src/store/native/testdata/filters.txt
import java.util.*;
import org.apache.hadoop.hbase.CompareOperator;
import org.apache.hadoop.hbase.filter.*;
import org.apache.hadoop.hbase.shaded.protobuf.ProtobufUtil;
import org.apache.hadoop.hbase.util.Bytes;
import org.apache.hadoop.hbase.util.Pair;

public class FilterGolden {
  static void out(String name, Filter f) throws Exception {
    byte[] b = ProtobufUtil.toFilter(f).toByteArray();
    StringBuilder sb = new StringBuilder();
    for (byte x : b) sb.append(String.format("%02x", x & 0xff));
    System.out.println(name + " " + sb);
  }

  static byte[] b(String s) { return Bytes.toBytes(s); }

  public static void main(String[] args) throws Exception {
    System.out.println("# HBase 2.6.1's ProtobufUtil.toFilter(f).toByteArray(), by FilterGolden.java");
    out("prefix", new PrefixFilter(new byte[] { 'a', 'b', 0, (byte) 0xff }));
    out("row_less_binary", new RowFilter(CompareOperator.LESS, new BinaryComparator(b("m"))));
    out("family_eq_prefix", new FamilyFilter(CompareOperator.EQUAL, new BinaryPrefixComparator(b("c"))));
    RegexStringComparator re = new RegexStringComparator("^a.b$");
    out("qualifier_ne_regex", new QualifierFilter(CompareOperator.NOT_EQUAL, re));
    out("value_eq_substring", new ValueFilter(CompareOperator.EQUAL, new SubstringComparator("AbC")));
    out("value_eq_null", new ValueFilter(CompareOperator.EQUAL, new NullComparator()));
    out("value_ne_bit_and", new ValueFilter(CompareOperator.NOT_EQUAL,
      new BitComparator(new byte[] { 0x0f }, BitComparator.BitwiseOp.AND)));
    out("value_ge_bit_xor", new ValueFilter(CompareOperator.GREATER_OR_EQUAL,
      new BitComparator(b("x"), BitComparator.BitwiseOp.XOR)));
    out("row_noop_bit_or", new RowFilter(CompareOperator.NO_OP,
      new BitComparator(b("x"), BitComparator.BitwiseOp.OR)));
    out("value_gt_le", new FilterList(FilterList.Operator.MUST_PASS_ALL,
      new ValueFilter(CompareOperator.GREATER, new BinaryComparator(b("a"))),
      new ValueFilter(CompareOperator.LESS_OR_EQUAL, new BinaryComparator(b("z")))));
    SingleColumnValueFilter scv = new SingleColumnValueFilter(b("cf"), b("q"), CompareOperator.EQUAL, b("v"));
    scv.setFilterIfMissing(true);
    out("scv", scv);
    SingleColumnValueExcludeFilter scve =
      new SingleColumnValueExcludeFilter(b("cf"), b("q"), CompareOperator.LESS, b("v"));
    scve.setLatestVersionOnly(false);
    out("scve", scve);
    out("column_prefix", new ColumnPrefixFilter(b("amount")));
    out("multiple_column_prefix", new MultipleColumnPrefixFilter(new byte[][] { b("b"), b("a") }));
    out("column_range", new ColumnRangeFilter(b("b"), true, b("d"), false));
    out("column_range_open", new ColumnRangeFilter(null, false, b("d"), true));
    out("column_count_get", new ColumnCountGetFilter(2));
    out("column_pagination", new ColumnPaginationFilter(2, 1));
    out("column_pagination_from", new ColumnPaginationFilter(2, b("b")));
    out("key_only", new KeyOnlyFilter());
    out("key_only_len", new KeyOnlyFilter(true));
    out("first_key_only", new FirstKeyOnlyFilter());
    out("inclusive_stop", new InclusiveStopFilter(b("r5")));
    out("page", new PageFilter(3));
    out("timestamps", new TimestampsFilter(Arrays.asList(30L, 10L, 20L), true));
    out("timestamps_nohint", new TimestampsFilter(Arrays.asList(5L), false));
    out("dependent", new DependentColumnFilter(b("cf"), b("ref"), true));
    out("dependent_value", new DependentColumnFilter(b("cf"), b("ref"), false, CompareOperator.EQUAL,
      new BinaryComparator(b("on"))));
    out("skip", new SkipFilter(new ValueFilter(CompareOperator.NOT_EQUAL, new BinaryComparator(b("0")))));
    out("while", new WhileMatchFilter(new RowFilter(CompareOperator.LESS, new BinaryComparator(b("r3")))));
    out("nested", new FilterList(FilterList.Operator.MUST_PASS_ONE, new PrefixFilter(b("a")),
      new FilterList(FilterList.Operator.MUST_PASS_ALL, new PrefixFilter(b("b")), new FirstKeyOnlyFilter())));
    out("multi_row_range", new MultiRowRangeFilter(Arrays.asList(
      new MultiRowRangeFilter.RowRange(b("a"), true, b("c"), false),
      new MultiRowRangeFilter.RowRange(b("x"), false, new byte[0], true))));
    out("fuzzy", new FuzzyRowFilter(Arrays.asList(new Pair<>(b("??_x"), new byte[] { 1, 1, 0, 0 }))));
  }
}
