#!/usr/bin/env bash
# PostgreSQL for the store's tests: Debian's server (installed with apt-get when missing, which
# needs root), its default cluster started, the `postgres` role given a password for TCP logins.
# Every step is a no-op when already done. Set FORGEWARD_TEST_POSTGRES_URL to use a server of
# your own instead.
#
# Prints on stdout:  export FORGEWARD_TEST_POSTGRES_URL=postgres://…
set -euo pipefail

if [ -n "${FORGEWARD_TEST_POSTGRES_URL:-}" ]; then
    echo "export FORGEWARD_TEST_POSTGRES_URL=$FORGEWARD_TEST_POSTGRES_URL"
    exit 0
fi
if ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
    apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2
fi
pg_version=$(ls /usr/lib/postgresql | sort -V | tail -n 1)
if ! pg_lsclusters -h | awk -v v="$pg_version" '$1 == v && $2 == "main" { found = 1 } END { exit !found }'; then
    pg_createcluster "$pg_version" main >/dev/null
fi
pg_ctlcluster "$pg_version" main status >/dev/null 2>&1 || pg_ctlcluster "$pg_version" main start >&2
pg_port=$(pg_lsclusters -h | awk -v v="$pg_version" '$1 == v && $2 == "main" { print $3 }')
for _ in $(seq 1 60); do
    pg_isready -q -h 127.0.0.1 -p "$pg_port" && break
    sleep 0.5
done
pg_isready -h 127.0.0.1 -p "$pg_port" >&2
su postgres -c "psql -q -p $pg_port -c \"ALTER USER postgres PASSWORD 'postgres'\"" >&2
echo "export FORGEWARD_TEST_POSTGRES_URL=postgres://postgres:postgres@127.0.0.1:$pg_port/postgres"
