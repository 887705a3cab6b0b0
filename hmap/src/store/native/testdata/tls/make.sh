#!/usr/bin/env bash
# Makes the TLS test fixtures of hmap/src/store/native/tls.rs's tests with
# openssl (EC P-256 keys, valid 100 years): run from this directory. The
# keys are for tests on 127.0.0.1 only.
set -euo pipefail
days=36500
ec() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1"; }
ca() { # name, CN
  ec "$1-key.pem"
  openssl req -x509 -new -key "$1-key.pem" -subj "/CN=$2" -days $days -sha256 \
    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign -out "$1.pem"
}
leaf() { # name, CN, extensions
  ec "$1-key.pem"
  openssl req -new -key "$1-key.pem" -subj "/CN=$2" -out "$1.csr"
  printf '%s\n' "$3" >"$1.ext"
  openssl x509 -req -in "$1.csr" -CA ca.pem -CAkey ca-key.pem -CAcreateserial -days $days -sha256 \
    -extfile "$1.ext" -out "$1.pem"
  rm -f "$1.csr" "$1.ext"
}
ca ca "hmap test CA"
ca other-ca "another CA"
leaf server localhost "subjectAltName=IP:127.0.0.1,DNS:localhost
keyUsage=critical,digitalSignature
extendedKeyUsage=serverAuth,clientAuth"
leaf client "hmap client" "keyUsage=critical,digitalSignature
extendedKeyUsage=clientAuth"
# Only the certificates and the leaves' keys are kept.
rm -f ca.srl ca-key.pem other-ca-key.pem
