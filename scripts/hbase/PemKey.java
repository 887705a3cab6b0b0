// Writes the private key of one entry of a PKCS12 keystore as PEM (PKCS#8,
// `BEGIN PRIVATE KEY`), for clients that read PEM rather than keystores
// (hmap's NativeStore over mutual TLS: HMAP_NATIVE_TLS_KEY). keytool exports
// certificates but not keys; this needs nothing beyond the JDK. Run by
// ./hbase start --mtls with Java's single-file launcher:
//
//   java PemKey.java KEYSTORE PASSWORD ALIAS OUT
//
// The key is written as the JDK encodes it (`Key.getEncoded()`), as any
// tool that takes a key out of a Java keystore does: for an EC key, PKCS#8
// without the optional public key inside its ECPrivateKey (RFC 5915), which
// hmap completes from the client certificate. So every --mtls run checks
// that hmap takes the key a Java shop hands it.
import java.io.FileInputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.util.Base64;

public class PemKey {
    public static void main(String[] args) throws Exception {
        var password = args[1].toCharArray();
        var store = KeyStore.getInstance("PKCS12");
        try (var in = new FileInputStream(args[0])) {
            store.load(in, password);
        }
        if (!(store.getKey(args[2], password) instanceof PrivateKey key) || !"PKCS#8".equals(key.getFormat())) {
            System.err.println("no private key in PKCS#8 under alias " + args[2] + " in " + args[0]);
            System.exit(1);
            return;
        }
        var body = Base64.getMimeEncoder(64, "\n".getBytes()).encodeToString(key.getEncoded());
        Files.writeString(Path.of(args[3]), "-----BEGIN PRIVATE KEY-----\n" + body + "\n-----END PRIVATE KEY-----\n");
    }
}
