// Writes the EC private key of one entry of a PKCS12 keystore as PEM
// (PKCS#8, `BEGIN PRIVATE KEY`), for clients that read PEM rather than
// keystores (hmap's NativeStore over mutual TLS: HMAP_NATIVE_TLS_KEY).
// keytool exports certificates but not keys; this needs nothing beyond the
// JDK. Run by ./hbase start --mtls with Java's single-file launcher:
//
//   java PemKey.java KEYSTORE PASSWORD ALIAS OUT
//
// The JDK's own PKCS#8 encoding of an EC key leaves the public key out of
// the inner ECPrivateKey (RFC 5915 makes it optional), and ring, rustls'
// crypto provider in hmap, refuses such a key ("failed to parse private key
// as RSA, ECDSA, or EdDSA"). So the key is encoded here with its public
// key, taken from the entry's certificate. P-256 only (what ./hbase makes).
import java.io.ByteArrayOutputStream;
import java.io.FileInputStream;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.interfaces.ECPrivateKey;
import java.security.interfaces.ECPublicKey;
import java.util.Base64;

public class PemKey {
    public static void main(String[] args) throws Exception {
        var password = args[1].toCharArray();
        var store = KeyStore.getInstance("PKCS12");
        try (var in = new FileInputStream(args[0])) {
            store.load(in, password);
        }
        if (!(store.getKey(args[2], password) instanceof ECPrivateKey key)
            || !(store.getCertificate(args[2]).getPublicKey() instanceof ECPublicKey pub)
            || key.getParams().getCurve().getField().getFieldSize() != 256) {
            System.err.println("no P-256 key and certificate under alias " + args[2] + " in " + args[0]);
            System.exit(1);
            return;
        }
        var point = concat(new byte[] {4}, fixed(pub.getW().getAffineX()), fixed(pub.getW().getAffineY()));
        // RFC 5915 ECPrivateKey: version 1, the private key, [1] the public key.
        var ecPrivateKey = der(0x30, concat(
            der(0x02, new byte[] {1}),
            der(0x04, fixed(key.getS())),
            der(0xa1, der(0x03, concat(new byte[] {0}, point)))));
        // RFC 5208 PrivateKeyInfo: version 0, id-ecPublicKey with prime256v1.
        var algorithm = der(0x30, concat(
            der(0x06, new byte[] {0x2a, (byte) 0x86, 0x48, (byte) 0xce, 0x3d, 0x02, 0x01}),
            der(0x06, new byte[] {0x2a, (byte) 0x86, 0x48, (byte) 0xce, 0x3d, 0x03, 0x01, 0x07})));
        var pkcs8 = der(0x30, concat(der(0x02, new byte[] {0}), algorithm, der(0x04, ecPrivateKey)));
        var body = Base64.getMimeEncoder(64, "\n".getBytes()).encodeToString(pkcs8);
        Files.writeString(Path.of(args[3]), "-----BEGIN PRIVATE KEY-----\n" + body + "\n-----END PRIVATE KEY-----\n");
    }

    /// A coordinate or scalar of P-256 as its 32 bytes, big-endian.
    static byte[] fixed(BigInteger n) {
        var bytes = n.toByteArray();
        var out = new byte[32];
        var len = Math.min(bytes.length, 32);
        System.arraycopy(bytes, bytes.length - len, out, 32 - len, len);
        return out;
    }

    /// One DER element: tag, length, contents.
    static byte[] der(int tag, byte[] contents) {
        var out = new ByteArrayOutputStream();
        out.write(tag);
        var len = contents.length;
        if (len < 0x80) {
            out.write(len);
        } else if (len < 0x100) {
            out.write(0x81);
            out.write(len);
        } else {
            out.write(0x82);
            out.write(len >> 8);
            out.write(len & 0xff);
        }
        out.writeBytes(contents);
        return out.toByteArray();
    }

    static byte[] concat(byte[]... parts) {
        var out = new ByteArrayOutputStream();
        for (var part : parts) {
            out.writeBytes(part);
        }
        return out.toByteArray();
    }
}
