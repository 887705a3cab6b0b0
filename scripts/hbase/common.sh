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

alive() { [ -f "$RUN/$1.pid" ] && kill -0 "$(cat "$RUN/$1.pid")" 2>/dev/null; }

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

classpath() {
  local cp_file="$RUN/classpath.txt" stamp="$RUN/classpath.pom" core_only=()
  mkdir -p "$RUN"
  [ "$WITH_GATEWAYS" = 1 ] || core_only=(-Dhmap.core-only)
  # The classpath is resolved again when the pom, the release or the gateways change.
  if [ ! -s "$cp_file" ] || ! { cat "$HERE/pom.xml"; echo "$VERSION $WITH_GATEWAYS"; } | cmp -s - "$stamp"; then
    log "resolving HBase $VERSION jars from Maven Central (cached in ~/.m2)"
    mvn -B -q -Dstyle.color=never -f "$HERE/pom.xml" -Dhbase.version="$VERSION" "${core_only[@]}" \
      dependency:build-classpath -Dmdep.outputFile="$cp_file" >&2
    { cat "$HERE/pom.xml"; echo "$VERSION $WITH_GATEWAYS"; } >"$stamp"
  fi
  printf '%s:%s' "$RUN/conf" "$(cat "$cp_file")"
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
