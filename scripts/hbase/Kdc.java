// An in-memory KDC for ./hbase start --kerberos: Apache Kerby's
// SimpleKdcServer on a free TCP port of 127.0.0.1. Run with Java's
// single-file launcher and kdc-pom.xml's classpath:
//
//   java Kdc.java DIR REALM LIFETIME_SECONDS PRINCIPAL...
//
// creates each principal with a random key and exports it alone into
// DIR/<first part of its name>.keytab (exporting with
// createAndExportPrincipals would put the whole database, krbtgt
// included, into one keytab), writes DIR/krb5.conf for Java and MIT
// Kerberos alike (TCP only, no DNS, AES only: JDK 17 refuses DES3 and
// RC4), then DIR/ready, and serves until killed. Tickets last at most
// LIFETIME_SECONDS.
import java.io.File;
import java.net.ServerSocket;
import java.nio.file.Files;
import org.apache.kerby.kerberos.kerb.server.KdcConfigKey;
import org.apache.kerby.kerberos.kerb.server.SimpleKdcServer;

public class Kdc {
    public static void main(String[] args) throws Exception {
        var dir = new File(args[0]);
        var realm = args[1];
        long lifetime = Long.parseLong(args[2]);
        int port;
        try (var socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = socket.getLocalPort();
        }
        var enctypes = "aes256-cts-hmac-sha1-96 aes128-cts-hmac-sha1-96";
        var kdc = new SimpleKdcServer();
        kdc.setWorkDir(dir);
        kdc.setKdcRealm(realm);
        kdc.setKdcHost("127.0.0.1");
        kdc.setAllowUdp(false);
        kdc.setAllowTcp(true);
        kdc.setKdcTcpPort(port);
        kdc.getKdcConfig().setString(KdcConfigKey.ENCRYPTION_TYPES, enctypes);
        kdc.getKdcConfig().setLong(KdcConfigKey.MAXIMUM_TICKET_LIFETIME, lifetime);
        kdc.getKdcConfig().setLong(KdcConfigKey.MAXIMUM_RENEWABLE_LIFETIME, lifetime);
        kdc.init();
        kdc.start();
        for (int i = 3; i < args.length; i++) {
            var principal = args[i] + "@" + realm;
            var name = args[i].split("/")[0];
            kdc.createPrincipal(principal);
            var keytab = new File(dir, name + ".keytab");
            keytab.delete();
            kdc.exportPrincipal(principal, keytab);
        }
        Files.writeString(new File(dir, "krb5.conf").toPath(), String.join("\n",
            "[libdefaults]",
            "  default_realm = " + realm,
            "  udp_preference_limit = 1",
            "  rdns = false",
            "  dns_canonicalize_hostname = false",
            "  dns_lookup_kdc = false",
            "  dns_lookup_realm = false",
            "  default_tkt_enctypes = " + enctypes,
            "  default_tgs_enctypes = " + enctypes,
            "  permitted_enctypes = " + enctypes,
            "",
            "[realms]",
            "  " + realm + " = {",
            "    kdc = 127.0.0.1:" + port,
            "  }",
            ""));
        Files.writeString(new File(dir, "ready").toPath(), port + "\n");
        System.out.println("KDC of " + realm + " on 127.0.0.1:" + port);
        Thread.currentThread().join();
    }
}
