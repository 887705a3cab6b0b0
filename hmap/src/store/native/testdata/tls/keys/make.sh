#!/usr/bin/env bash
# Makes the client keys of hmap/src/store/native/tls.rs's test of the key
# formats mutual TLS accepts: each key as Java's keytool (JDK 17, through a
# PKCS12 keystore and `openssl pkcs12 -nodes`, the usual way to get a key out
# of a Java keystore) and OpenSSL's tools write it, with a certificate for it
# signed by a CA of their own (ca.pem), valid 100 years. Run from this
# directory; the keys are for tests on 127.0.0.1 only, and the CA's key is
# not kept.
set -euo pipefail
days=36500 pass=changeit
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out ca-key.pem
openssl req -x509 -new -key ca-key.pem -subj "/CN=hmap test key CA" -days $days -sha256 \
  -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign -out ca.pem
printf 'keyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n' >client.ext
sign() { # csr, certificate
  openssl x509 -req -in "$1" -CA ca.pem -CAkey ca-key.pem -CAcreateserial -days $days -sha256 \
    -extfile client.ext -out "$2" 2>/dev/null
  rm -f "$1"
}
# keytool: the key pair in a PKCS12 keystore, its certificate signed by the
# CA, the key taken out with openssl pkcs12 as the JDK encoded it (for EC:
# PKCS#8 without the optional public key).
keytool_key() { # name, keytool's key options...
  local name=$1
  shift
  keytool -genkeypair -storetype PKCS12 -keystore "$name.p12" -storepass $pass -alias client \
    -dname "CN=hmap client $name" "$@" 2>/dev/null
  keytool -certreq -storetype PKCS12 -keystore "$name.p12" -storepass $pass -alias client -file "$name.csr"
  sign "$name.csr" "$name.pem"
  openssl pkcs12 -in "$name.p12" -passin pass:$pass -nocerts -nodes 2>/dev/null | sed -n '/BEGIN/,$p' >"$name-key.pem"
  rm -f "$name.p12"
}
keytool_key keytool-ec-p256 -keyalg EC -groupname secp256r1
keytool_key keytool-ec-p384 -keyalg EC -groupname secp384r1
keytool_key keytool-rsa -keyalg RSA -keysize 2048
keytool_key keytool-ed25519 -keyalg Ed25519
# OpenSSL: one EC key in four encodings (PKCS#8 and SEC1, each with and
# without the public key), one RSA key in two (PKCS#8, PKCS#1), an Ed25519 key.
openssl_cert() { # name
  openssl req -new -key "$1-key.pem" -subj "/CN=hmap client $1" -out "$1.csr"
  sign "$1.csr" "$1.pem"
}
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out openssl-ec-key.pem
openssl_cert openssl-ec
openssl ec -in openssl-ec-key.pem -out openssl-ec-sec1-key.pem 2>/dev/null
openssl ec -in openssl-ec-key.pem -no_public -out openssl-ec-sec1-nopub-key.pem 2>/dev/null
openssl pkcs8 -topk8 -nocrypt -in openssl-ec-sec1-nopub-key.pem -out openssl-ec-nopub-key.pem
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out openssl-rsa-key.pem
openssl_cert openssl-rsa
openssl rsa -in openssl-rsa-key.pem -traditional -out openssl-rsa-pkcs1-key.pem 2>/dev/null
openssl genpkey -algorithm ed25519 -out openssl-ed25519-key.pem
openssl_cert openssl-ed25519
rm -f ca-key.pem ca.srl client.ext
