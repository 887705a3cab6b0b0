// The admin side of scripts/hbase/cluster: what the master says about the
// cluster, and region moves, splits and merges that wait until they are
// done. Run by the script (compiled once into the run directory), with the
// cluster's hbase-site.xml and these system properties, which name the
// parts after their ports:
//
//   -Dhmap.cluster.masters=master:16100,backup-master:16110
//   -Dhmap.cluster.rs=16120:3              (rs1 on 16120, rs2 on 16121, ...)
//   -Dhmap.cluster.timeout=60              (seconds; past it: exit 124)
//
// Subcommands (what they print on stdout; errors go to stderr, exit 1):
//
//   status                 active-master PART HOST:PORT
//                          backup-master PART HOST:PORT        (one per backup)
//                          live PART HOST:PORT startcode=S regions=N   (one per live region server)
//                          dead SERVERNAME                     (one per dead server the master lists)
//                          meta-server PART HOST:PORT
//                          regions-in-transition N
//                          balancer on|off
//   ready SINCE_MS [--backup PORT] PORT...
//                          waits until each region server PORT is live with a start code
//                          >= SINCE_MS (and the master on PORT lists itself as a backup),
//                          switches the balancer off and makes a table round trip; prints
//                          `ready ms=N`
//   wait-live SINCE_MS PORT...   waits until each PORT is live (start code >= SINCE_MS);
//                          prints `live PART HOST:PORT startcode=S` for each
//   wait-stable            waits until no region is in transition and every region of every
//                          table (hbase:meta too) is open on a live server; prints `stable ms=N`
//   where TABLE [ROW]      PART HOST:PORT region=ENCODED start=KEY end=KEY state=STATE live=true|false
//                          (the region of ROW, or each of TABLE's regions in key order;
//                          keys as Bytes.toStringBinary, from hbase:meta)
//   meta-server            PART HOST:PORT
//   move TABLE [ROW] [--to PART]
//                          moved table=T region=E from=PART to=PART ms=N
//   split TABLE ROW        split table=T parent=E at=ROW daughters=E1,E2 servers=PART,PART ms=N
//   merge TABLE [ROW]      merged table=T regions=E1,E2 into=E server=PART ms=N
//                          (the table's first two regions, or ROW's region and the next)
//   move-meta [--to PART]  moved table=hbase:meta region=1588230740 from=PART to=PART ms=N
//   balancer on|off        balancer on|off (the previous state: was=on|off)
//   shutdown               asks the master to stop the cluster (region servers and masters):
//                          `shutdown requested`
//
// Without --to, a move goes to the first live region server (rs1, rs2, ...)
// other than the region's own. The ms of move, split, merge and move-meta
// count from the request to the master until the result is open; those of
// ready and wait-stable from the program's start.
import java.io.IOException;
import java.util.*;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.*;
import org.apache.hadoop.hbase.ClusterMetrics.Option;
import org.apache.hadoop.hbase.client.*;
import org.apache.hadoop.hbase.util.Bytes;

public class ClusterAdmin {
    static final Map<Integer, String> PARTS = new HashMap<>();
    static long deadline;
    static long started = System.currentTimeMillis();
    static volatile String doing = "connecting";
    static Connection connection;
    static Admin admin;

    /** A failure to report: its message on stderr, exit 1. */
    static class Failure extends RuntimeException {
        Failure(String message) { super(message); }
    }

    public static void main(String[] args) throws Exception {
        int timeout = Integer.getInteger("hmap.cluster.timeout", 60);
        deadline = started + timeout * 1000L;
        for (String m : System.getProperty("hmap.cluster.masters", "").split(",")) {
            if (m.contains(":")) {
                PARTS.put(Integer.parseInt(m.substring(m.indexOf(':') + 1)), m.substring(0, m.indexOf(':')));
            }
        }
        String[] rs = System.getProperty("hmap.cluster.rs", "16120:0").split(":");
        for (int i = 0; i < Integer.parseInt(rs[1]); i++) {
            PARTS.put(Integer.parseInt(rs[0]) + i, "rs" + (i + 1));
        }
        var watchdog = new Thread(() -> {
            try {
                Thread.sleep(Math.max(1, deadline - System.currentTimeMillis()));
            } catch (InterruptedException e) {
                return;
            }
            System.err.println("cluster-admin: timed out after " + timeout + " s " + doing);
            System.err.flush();
            Runtime.getRuntime().halt(124);
        });
        watchdog.setDaemon(true);
        watchdog.start();
        if (args.length == 0) {
            usage();
        }
        Configuration conf = HBaseConfiguration.create();
        // Every call within the command's deadline; HBase's default retries otherwise.
        conf.setInt("hbase.client.operation.timeout", timeout * 1000);
        conf.setInt("hbase.client.meta.operation.timeout", timeout * 1000);
        int code = 0;
        try {
            connection = ConnectionFactory.createConnection(conf);
            admin = connection.getAdmin();
            run(args[0], Arrays.copyOfRange(args, 1, args.length));
        } catch (Failure e) {
            System.err.println("cluster-admin: " + e.getMessage());
            code = 1;
        } catch (Exception e) {
            System.err.println("cluster-admin: " + args[0] + " failed " + doing + ": " + e);
            code = 1;
        }
        System.out.flush();
        // Closing the connection may wait for a dead server: not worth the time.
        Runtime.getRuntime().halt(code);
    }

    static void usage() {
        System.err.println("usage: ClusterAdmin status | ready SINCE_MS [--backup PORT] PORT... | wait-live SINCE_MS PORT... | "
            + "wait-stable | where TABLE [ROW] | meta-server | move TABLE [ROW] [--to PART] | split TABLE ROW | "
            + "merge TABLE [ROW] | move-meta [--to PART] | balancer on|off | shutdown");
        Runtime.getRuntime().halt(2);
    }

    static void run(String command, String[] args) throws Exception {
        switch (command) {
            case "status" -> status();
            case "ready" -> ready(args);
            case "wait-live" -> waitLive(Long.parseLong(args[0]), ports(args, 1));
            case "wait-stable" -> waitStable();
            case "where" -> where(args);
            case "meta-server" -> System.out.println(describe(metaServer()));
            case "move" -> move(args);
            case "split" -> split(args);
            case "merge" -> merge(args);
            case "move-meta" -> moveMeta(args);
            case "balancer" -> balancer(args);
            case "shutdown" -> {
                doing = "asking the master to shut the cluster down";
                admin.shutdown();
                System.out.println("shutdown requested");
            }
            default -> usage();
        }
    }

    // ---- naming

    static String part(ServerName server) {
        if (server == null) {
            return "none";
        }
        return PARTS.getOrDefault(server.getPort(), "unknown");
    }

    static String address(ServerName server) {
        return server == null ? "-" : server.getHostname() + ":" + server.getPort();
    }

    static String describe(ServerName server) {
        return part(server) + " " + address(server);
    }

    static List<Integer> ports(String[] args, int from) {
        var ports = new ArrayList<Integer>();
        for (int i = from; i < args.length; i++) {
            ports.add(Integer.parseInt(args[i]));
        }
        return ports;
    }

    static long elapsed() {
        return System.currentTimeMillis() - started;
    }

    static void pause() throws InterruptedException {
        Thread.sleep(250);
    }

    // ---- what the master says

    static ClusterMetrics metrics(Option... options) throws IOException {
        return admin.getClusterMetrics(EnumSet.copyOf(Arrays.asList(options)));
    }

    static Map<Integer, ServerName> liveByPort() throws IOException {
        var live = new TreeMap<Integer, ServerName>();
        for (ServerName server : metrics(Option.LIVE_SERVERS).getLiveServerMetrics().keySet()) {
            ServerName known = live.get(server.getPort());
            // A server restarted on its port may be listed twice for a moment: the newer counts.
            if (known == null || known.getStartCode() < server.getStartCode()) {
                live.put(server.getPort(), server);
            }
        }
        return live;
    }

    /** The live server of region server PART (rsN), or a failure. */
    static ServerName liveServer(String part) throws IOException {
        for (var entry : liveByPort().entrySet()) {
            if (part.equals(PARTS.get(entry.getKey()))) {
                return entry.getValue();
            }
        }
        throw new Failure(part + " is not a live region server");
    }

    static ServerName metaServer() throws IOException {
        try (var locator = connection.getRegionLocator(TableName.META_TABLE_NAME)) {
            return locator.getRegionLocation(HConstants.EMPTY_START_ROW, true).getServerName();
        }
    }

    static void status() throws IOException {
        doing = "asking the master for the cluster's state";
        var m = metrics(Option.MASTER, Option.BACKUP_MASTERS, Option.LIVE_SERVERS, Option.DEAD_SERVERS,
            Option.REGIONS_IN_TRANSITION, Option.BALANCER_ON);
        System.out.println("active-master " + describe(m.getMasterName()));
        for (ServerName backup : m.getBackupMasterNames()) {
            System.out.println("backup-master " + describe(backup));
        }
        var live = new TreeMap<Integer, String>();
        for (var entry : m.getLiveServerMetrics().entrySet()) {
            ServerName s = entry.getKey();
            live.put(s.getPort(), "live " + describe(s) + " startcode=" + s.getStartCode() + " regions="
                + entry.getValue().getRegionMetrics().size());
        }
        live.values().forEach(System.out::println);
        for (ServerName dead : m.getDeadServerNames()) {
            System.out.println("dead " + dead);
        }
        doing = "locating hbase:meta";
        System.out.println("meta-server " + describe(metaServer()));
        System.out.println("regions-in-transition " + m.getRegionStatesInTransition().size());
        Boolean on = m.getBalancerOn();
        System.out.println("balancer " + (on == null ? "unknown" : on ? "on" : "off"));
    }

    static void waitLive(long since, List<Integer> ports) throws Exception {
        for (int port : ports) {
            String name = PARTS.getOrDefault(port, "port " + port);
            doing = "waiting for " + name + " to be live (the master to list it)";
            while (true) {
                ServerName s = liveByPort().get(port);
                if (s != null && s.getStartCode() >= since) {
                    System.out.println("live " + describe(s) + " startcode=" + s.getStartCode());
                    break;
                }
                pause();
            }
        }
    }

    static void ready(String[] args) throws Exception {
        long since = Long.parseLong(args[0]);
        int backup = -1, from = 1;
        if (args.length > 2 && args[1].equals("--backup")) {
            backup = Integer.parseInt(args[2]);
            from = 3;
        }
        var out = System.out;
        System.setOut(new java.io.PrintStream(java.io.OutputStream.nullOutputStream()));
        waitLive(since, ports(args, from));
        System.setOut(out);
        if (backup > 0) {
            final int port = backup;
            doing = "waiting for the master on port " + port + " to be a backup master";
            while (metrics(Option.BACKUP_MASTERS).getBackupMasterNames().stream().noneMatch(s -> s.getPort() == port)) {
                pause();
            }
        }
        doing = "switching the balancer off";
        admin.balancerSwitch(false, true);
        // The master lists tables before it can serve them: a table round trip.
        doing = "making a table round trip (create, put, get, delete hmap_probe)";
        var name = TableName.valueOf("hmap_probe");
        byte[] f = Bytes.toBytes("f"), q = Bytes.toBytes("q"), row = Bytes.toBytes("r");
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
                throw new Failure("the probe read back " + value);
            }
        }
        admin.disableTable(name);
        admin.deleteTable(name);
        System.out.println("ready ms=" + elapsed());
    }

    // ---- regions, from hbase:meta

    /** A region as hbase:meta has it. */
    record Region(RegionInfo info, ServerName server, String state) {
        String encoded() { return info.getEncodedName(); }
        byte[] start() { return info.getStartKey(); }
        byte[] end() { return info.getEndKey(); }
        boolean holds(byte[] row) {
            return Bytes.compareTo(start(), row) <= 0 && (end().length == 0 || Bytes.compareTo(row, end()) < 0);
        }
    }

    /** TABLE's regions in key order (split parents left out). */
    static List<Region> regions(TableName table) throws IOException {
        if (!admin.tableExists(table)) {
            throw new Failure("no table " + table);
        }
        byte[] name = table.getName();
        // As MetaTableAccessor bounds a table's rows (hbase:meta compares its row keys
        // part by part: table, start key, region id).
        var scan = new Scan().withStartRow(Bytes.add(name, Bytes.toBytes(",,")))
            .withStopRow(Bytes.add(name, Bytes.toBytes(" ,,"))).addFamily(HConstants.CATALOG_FAMILY);
        var regions = new ArrayList<Region>();
        try (var meta = connection.getTable(TableName.META_TABLE_NAME); var scanner = meta.getScanner(scan)) {
            for (Result r : scanner) {
                RegionInfo info = RegionInfo.parseFromOrNull(r.getValue(HConstants.CATALOG_FAMILY, HConstants.REGIONINFO_QUALIFIER));
                if (info == null || !info.getTable().equals(table) || info.getReplicaId() != 0
                        || (info.isSplit() && info.isOffline())) {
                    continue;
                }
                String state = Bytes.toString(r.getValue(HConstants.CATALOG_FAMILY, HConstants.STATE_QUALIFIER));
                if ("SPLIT".equals(state) || "MERGED".equals(state)) {
                    continue;
                }
                byte[] server = r.getValue(HConstants.CATALOG_FAMILY, HConstants.SERVER_QUALIFIER);
                byte[] startcode = r.getValue(HConstants.CATALOG_FAMILY, HConstants.STARTCODE_QUALIFIER);
                ServerName sn = server == null ? null
                    : ServerName.valueOf(Bytes.toString(server), startcode == null ? 0 : Bytes.toLong(startcode));
                regions.add(new Region(info, sn, state == null ? "UNKNOWN" : state));
            }
        }
        regions.sort((a, b) -> Bytes.compareTo(a.start(), b.start()));
        return regions;
    }

    static Region regionOf(TableName table, byte[] row) throws IOException {
        for (Region r : regions(table)) {
            if (r.holds(row)) {
                return r;
            }
        }
        throw new Failure("no region of " + table + " holds " + Bytes.toStringBinary(row) + " in hbase:meta");
    }

    static boolean isLive(ServerName s, Map<Integer, ServerName> live) {
        return s != null && s.equals(live.get(s.getPort()));
    }

    /** Whether REGION is open on a live server. */
    static boolean open(Region r, Map<Integer, ServerName> live) {
        return "OPEN".equals(r.state()) && isLive(r.server(), live);
    }

    static String line(Region r, Map<Integer, ServerName> live) {
        return describe(r.server()) + " region=" + r.encoded() + " start=" + Bytes.toStringBinary(r.start())
            + " end=" + Bytes.toStringBinary(r.end()) + " state=" + r.state() + " live=" + isLive(r.server(), live);
    }

    static void where(String[] args) throws IOException {
        if (args.length < 1) {
            usage();
        }
        TableName table = TableName.valueOf(args[0]);
        doing = "reading " + table + "'s regions from hbase:meta";
        var live = liveByPort();
        if (args.length > 1) {
            System.out.println(line(regionOf(table, Bytes.toBytesBinary(args[1])), live));
        } else {
            for (Region r : regions(table)) {
                System.out.println(line(r, live));
            }
        }
    }

    static void waitStable() throws Exception {
        doing = "waiting for no region in transition and every region open on a live server";
        while (true) {
            if (metrics(Option.REGIONS_IN_TRANSITION).getRegionStatesInTransition().isEmpty()) {
                var live = liveByPort();
                boolean all = isLive(metaServer(), live);
                for (TableName t : admin.listTableNames()) {
                    for (Region r : regions(t)) {
                        all &= open(r, live);
                    }
                }
                if (all) {
                    break;
                }
            }
            pause();
        }
        System.out.println("stable ms=" + elapsed());
    }

    // ---- moves, splits, merges

    /** The --to PART option of ARGS, or null; the other arguments in REST. */
    static String target(String[] args, List<String> rest) {
        String to = null;
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--to") && i + 1 < args.length) {
                to = args[++i];
            } else if (args[i].startsWith("--to=")) {
                to = args[i].substring(5);
            } else {
                rest.add(args[i]);
            }
        }
        return to;
    }

    /** The server to move to: PART's, or the first live one but FROM. */
    static ServerName destination(String to, ServerName from) throws IOException {
        if (to != null) {
            ServerName s = liveServer(to);
            if (from != null && s.getAddress().equals(from.getAddress())) {
                throw new Failure("the region is on " + to + " already");
            }
            return s;
        }
        for (ServerName s : liveByPort().values()) {
            if (from == null || !s.getAddress().equals(from.getAddress())) {
                return s;
            }
        }
        throw new Failure("no other live region server to move to");
    }

    /** Runs ACTION until it succeeds, again after failures that pass (a region with references, in transition). */
    interface Action { void run() throws Exception; }

    static void retrying(Action action) throws Exception {
        String said = null;
        long saidAt = 0;
        while (true) {
            try {
                action.run();
                return;
            } catch (Exception e) {
                Throwable cause = e instanceof java.util.concurrent.ExecutionException && e.getCause() != null ? e.getCause() : e;
                String message = String.valueOf(cause.getMessage()).toLowerCase(Locale.ROOT);
                boolean passes = message.contains("reference") || message.contains("splittable")
                    || message.contains("mergeable") || message.contains("transition") || message.contains("not online")
                    || message.contains("pleasehold") || message.contains("not running") || message.contains("offline");
                if (!passes) {
                    throw new Failure(doing + ": " + cause);
                }
                // Said once, and again every 10 s while it lasts.
                String what = cause.getClass().getSimpleName() + " (" + cause.getMessage().split("\n")[0] + ")";
                if (!what.equals(said) || System.currentTimeMillis() - saidAt >= 10_000) {
                    System.err.println("cluster-admin: " + doing + ": " + what + "; trying again every second");
                    said = what;
                    saidAt = System.currentTimeMillis();
                }
                Thread.sleep(1000);
            }
        }
    }

    static long remaining() {
        return Math.max(1, deadline - System.currentTimeMillis());
    }

    static void move(String[] args) throws Exception {
        var rest = new ArrayList<String>();
        String to = target(args, rest);
        if (rest.isEmpty()) {
            usage();
        }
        TableName table = TableName.valueOf(rest.get(0));
        Region r = rest.size() > 1 ? regionOf(table, Bytes.toBytesBinary(rest.get(1))) : regions(table).get(0);
        ServerName dest = destination(to, r.server());
        doing = "moving " + r.encoded() + " to " + describe(dest);
        started = System.currentTimeMillis();
        retrying(() -> admin.move(r.info().getEncodedNameAsBytes(), dest));
        doing = "waiting for " + r.encoded() + " to be open on " + describe(dest);
        while (true) {
            var live = liveByPort();
            Region now = regions(table).stream().filter(x -> x.encoded().equals(r.encoded())).findFirst()
                .orElseThrow(() -> new Failure("region " + r.encoded() + " left hbase:meta while moving"));
            if (open(now, live) && now.server().equals(dest)) {
                break;
            }
            pause();
        }
        System.out.println("moved table=" + table + " region=" + r.encoded() + " from=" + part(r.server())
            + " to=" + part(dest) + " ms=" + elapsed());
    }

    static void moveMeta(String[] args) throws Exception {
        var rest = new ArrayList<String>();
        String to = target(args, rest);
        ServerName from = metaServer();
        ServerName dest = destination(to, from);
        RegionInfo meta = RegionInfoBuilder.FIRST_META_REGIONINFO;
        doing = "moving hbase:meta to " + describe(dest);
        started = System.currentTimeMillis();
        retrying(() -> admin.move(meta.getEncodedNameAsBytes(), dest));
        doing = "waiting for hbase:meta to be open on " + describe(dest);
        while (!dest.equals(metaServer())) {
            pause();
        }
        // Readable there.
        try (var t = connection.getTable(TableName.META_TABLE_NAME);
             var scanner = t.getScanner(new Scan().setLimit(1))) {
            scanner.next();
        }
        System.out.println("moved table=hbase:meta region=" + meta.getEncodedName() + " from=" + part(from)
            + " to=" + part(dest) + " ms=" + elapsed());
    }

    static void split(String[] args) throws Exception {
        if (args.length != 2) {
            usage();
        }
        TableName table = TableName.valueOf(args[0]);
        byte[] at = Bytes.toBytesBinary(args[1]);
        Region r = regionOf(table, at);
        if (Bytes.equals(r.start(), at)) {
            throw new Failure("row " + args[1] + " starts region " + r.encoded() + ": no split there");
        }
        doing = "splitting " + r.encoded() + " at " + args[1];
        started = System.currentTimeMillis();
        retrying(() -> admin.splitRegionAsync(r.info().getRegionName(), at).get(remaining(), TimeUnit.MILLISECONDS));
        doing = "waiting for the daughters of " + r.encoded() + " to be open";
        Region low, high;
        while (true) {
            var live = liveByPort();
            low = high = null;
            for (Region x : regions(table)) {
                if (Bytes.equals(x.start(), r.start()) && Bytes.equals(x.end(), at) && open(x, live)) {
                    low = x;
                } else if (Bytes.equals(x.start(), at) && Bytes.equals(x.end(), r.end()) && open(x, live)) {
                    high = x;
                }
            }
            if (low != null && high != null) {
                break;
            }
            pause();
        }
        System.out.println("split table=" + table + " parent=" + r.encoded() + " at=" + args[1] + " daughters="
            + low.encoded() + "," + high.encoded() + " servers=" + part(low.server()) + "," + part(high.server())
            + " ms=" + elapsed());
    }

    static void merge(String[] args) throws Exception {
        if (args.length < 1 || args.length > 2) {
            usage();
        }
        TableName table = TableName.valueOf(args[0]);
        var all = regions(table);
        int i = 0;
        if (args.length > 1) {
            byte[] row = Bytes.toBytesBinary(args[1]);
            while (i < all.size() && !all.get(i).holds(row)) {
                i++;
            }
        }
        if (i + 1 >= all.size()) {
            throw new Failure(table + " has no two adjacent regions to merge there (" + all.size() + " region(s))");
        }
        Region a = all.get(i), b = all.get(i + 1);
        doing = "merging " + a.encoded() + " and " + b.encoded();
        started = System.currentTimeMillis();
        retrying(() -> admin.mergeRegionsAsync(new byte[][] { a.info().getEncodedNameAsBytes(),
            b.info().getEncodedNameAsBytes() }, false).get(remaining(), TimeUnit.MILLISECONDS));
        doing = "waiting for the merge of " + a.encoded() + " and " + b.encoded() + " to be open";
        Region merged = null;
        while (merged == null) {
            var live = liveByPort();
            for (Region x : regions(table)) {
                if (Bytes.equals(x.start(), a.start()) && Bytes.equals(x.end(), b.end()) && open(x, live)) {
                    merged = x;
                }
            }
            if (merged == null) {
                pause();
            }
        }
        System.out.println("merged table=" + table + " regions=" + a.encoded() + "," + b.encoded() + " into="
            + merged.encoded() + " server=" + part(merged.server()) + " ms=" + elapsed());
    }

    static void balancer(String[] args) throws IOException {
        if (args.length != 1 || !(args[0].equals("on") || args[0].equals("off"))) {
            usage();
        }
        doing = "switching the balancer " + args[0];
        boolean was = admin.balancerSwitch(args[0].equals("on"), true);
        System.out.println("balancer " + args[0] + " was=" + (was ? "on" : "off"));
    }
}
