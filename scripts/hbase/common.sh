# Shared by scripts/hbase/hbase (the standalone HBase) and scripts/hbase/cluster
# (the multi-process cluster): sourced, not run. The sourcing script sets,
# before sourcing it: HERE (this directory) and RUN (its run directory,
# absolute); and before calling classpath: VERSION (the hbase-server release),
# WITH_GATEWAYS (1: the Thrift gateways' and codecs' jars too, 0: not) and a
# log function (messages to stderr). These definitions were moved here from
# scripts/hbase/hbase unchanged, so that script behaves as it did.

# The flags bin/hbase passes on JDK 11 and later.
JVM_FLAGS=(
  -XX:+UseG1GC "-XX:OnOutOfMemoryError=kill -9 %p"
  -Djava.util.logging.config.class=org.apache.hadoop.hbase.logging.JulToSlf4jInitializer
  -Dorg.apache.hbase.thirdparty.io.netty.tryReflectionSetAccessible=true
  --add-modules jdk.unsupported
  --add-opens java.base/java.io=ALL-UNNAMED --add-opens java.base/java.nio=ALL-UNNAMED
  --add-opens java.base/sun.nio.ch=ALL-UNNAMED --add-opens java.base/java.lang=ALL-UNNAMED
  --add-opens java.base/jdk.internal.ref=ALL-UNNAMED --add-opens java.base/java.lang.reflect=ALL-UNNAMED
  --add-opens java.base/java.util=ALL-UNNAMED --add-opens java.base/java.util.concurrent=ALL-UNNAMED
  --add-exports java.base/jdk.internal.misc=ALL-UNNAMED
  --add-exports java.security.jgss/sun.security.krb5=ALL-UNNAMED
  --add-exports java.base/sun.net.dns=ALL-UNNAMED --add-exports java.base/sun.net.util=ALL-UNNAMED
  -Dhbase.log.dir="$RUN/logs" -Dhbase.home.dir="$RUN" -Dhbase.id.str=hmap -Djava.io.tmpdir="$RUN/tmp"
)
# Flags of the caller's own, after these (HMAP_JVM_FLAGS, split on spaces):
# .ci/run passes -XX:TieredStopAtLevel=1 to its servers without TLS or Kerberos.
# A collector named there replaces G1 (the JVM refuses two).
read -r -a EXTRA_JVM_FLAGS <<<"${HMAP_JVM_FLAGS:-}"
if [[ " ${EXTRA_JVM_FLAGS[*]} " =~ \ -XX:\+Use[A-Za-z]+GC\  ]]; then
  for i in "${!JVM_FLAGS[@]}"; do
    [ "${JVM_FLAGS[$i]}" = -XX:+UseG1GC ] && unset 'JVM_FLAGS[i]'
  done
  JVM_FLAGS=("${JVM_FLAGS[@]}")
fi
JVM_FLAGS+=("${EXTRA_JVM_FLAGS[@]}")

alive() { [ -f "$RUN/$1.pid" ] && kill -0 "$(cat "$RUN/$1.pid")" 2>/dev/null; }

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# resolved_classpath POM [MAVEN FLAGS...]: the classpath of POM's
# dependencies (mvn dependency:build-classpath), resolved once for every
# run directory and cached in target/hbase-classpaths under a hash of the
# pom and the flags: each server's start would otherwise spend some 10 s of
# CPU in Maven (.ci/run starts seven).
resolved_classpath() {
  local pom=$1 key cache
  shift
  key=$({ cat "$pom"; echo "$*"; } | sha256sum | cut -c1-16)
  cache="$CLASSPATHS/$(basename "$pom" .xml)-$key.txt"
  if [ ! -s "$cache" ]; then
    log "resolving the jars of $(basename "$pom") $* from Maven Central (cached in ~/.m2)"
    mkdir -p "$CLASSPATHS"
    # Written aside and renamed: starts side by side may resolve it at once.
    mvn -B -q -Dstyle.color=never -f "$pom" "$@" dependency:build-classpath \
      -Dmdep.outputFile="$cache.$$" >&2 || { rm -f "$cache.$$"; return 1; }
    mv -f "$cache.$$" "$cache"
  fi
  cat "$cache"
}
CLASSPATHS=${HMAP_CLASSPATH_CACHE:-$(cd "$HERE/../.." && pwd)/target/hbase-classpaths}

# shadow_unused_defaults DIR: empty hdfs-default.xml and mapred-default.xml in
# DIR, the configuration directory that comes first on the classpath. A
# server on the local file system reads neither, but Hadoop's Configuration
# parses every default resource again whenever a configuration is copied
# before it was read, and HBase does that for each store's first flush
# (HFileBlock.Writer copies the store's CompoundConfiguration): with the
# 165 KB and 77 KB of these two (core-default.xml, 105 KB, is kept), that
# parsing was a third of the server's CPU in the conformance suite, whose
# every case creates a table and deletes it.
shadow_unused_defaults() {
  local file
  for file in hdfs-default.xml mapred-default.xml; do
    echo '<?xml version="1.0"?><configuration></configuration>' >"$1/$file"
  done
}

classpath() {
  local core_only=() jars
  [ "$WITH_GATEWAYS" = 1 ] || core_only=(-Dhmap.core-only)
  jars=$(resolved_classpath "$HERE/pom.xml" -Dhbase.version="$VERSION" "${core_only[@]}") || return 1
  printf '%s:%s' "$RUN/conf" "$jars"
}

# The servers' warnings and errors (with their stack traces' first lines),
# the latest last: what a failed test run prints to say what the servers
# saw (.ci/run calls it when a stage fails).
warnings() {
  local f
  for f in "$RUN"/logs/*.log; do
    [ -f "$f" ] || continue
    echo "---- the last warnings and errors of $f"
    grep -E ' (WARN|ERROR|FATAL) |Exception|^\s+at ' "$f" | tail -n "${1:-80}" | cut -c1-600
  done
}
