#!/usr/bin/env bash
# Regenerates the golden messages of hmap's Thrift codec tests, in the binary
# protocol (NAME.bin) and the compact one (compact/NAME.bin), with HBase's
# generated Thrift2 classes (hbase-thrift 2.6.1) and libthrift 0.14.1 from the
# local Maven repository (fetch them with
# `mvn dependency:get -Dartifact=org.apache.hbase:hbase-thrift:2.6.1` and
# `-Dartifact=org.apache.thrift:libthrift:0.14.1` if missing).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
m2="${M2_REPO:-$HOME/.m2/repository}"
cp="$m2/org/apache/hbase/hbase-thrift/2.6.1/hbase-thrift-2.6.1.jar"
cp="$cp:$m2/org/apache/thrift/libthrift/0.14.1/libthrift-0.14.1.jar"
cp="$cp:$(ls "$m2"/org/slf4j/slf4j-api/*/slf4j-api-*.jar | head -n1)"
cp="$cp:$(ls "$m2"/javax/annotation/javax.annotation-api/*/javax.annotation-api-*.jar | head -n1)"
build="$(mktemp -d)"
trap 'rm -rf "$build"' EXIT
javac -nowarn -d "$build" -cp "$cp" "$here/Golden.java"
mkdir -p "$here/compact"
java -cp "$build:$cp" Golden "$here"
