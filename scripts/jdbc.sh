#!/usr/bin/env bash
# Sourced by scripts/test.sh: the PostgreSQL JDBC driver (Debian's libpostgresql-jdbc-java) and a
# headless Java runtime for tests/api/sql_clients.rs, installed with apt when missing (needs root).
# Exports RAPID_TEST_JDBC_JAR, the driver's jar.
jdbc_install() {
  local jar=/usr/share/java/postgresql.jar
  if [ ! -f "$jar" ] || ! command -v java >/dev/null; then
    if [ "$(id -u)" != 0 ]; then
      echo "jdbc.sh: no JDBC driver or java and not root: apt-get install libpostgresql-jdbc-java default-jre-headless" >&2
      return 1
    fi
    echo "jdbc.sh: installing the JDBC driver and a Java runtime with apt" >&2
    local packages=(libpostgresql-jdbc-java)
    command -v java >/dev/null || packages+=(default-jre-headless)
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${packages[@]}" >&2 || {
      DEBIAN_FRONTEND=noninteractive apt-get update -q >&2 &&
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${packages[@]}" >&2
    }
  fi
  export RAPID_TEST_JDBC_JAR="$jar"
}
