#!/bin/sh
# Starts as root to read the password secret (a Compose secret keeps the host file's owner and
# mode) and to hand PGDATA to postgres, makes the cluster on first start, then runs the server
# as postgres. SIGINT (the image's stop signal) is PostgreSQL's fast shutdown.
set -eu

: "${POSTGRES_USER:=postgres}"
: "${POSTGRES_DB:=$POSTGRES_USER}"
as_postgres() { setpriv --reuid=postgres --regid=postgres --init-groups -- "$@"; }

if [ "$(id -u)" != 0 ]; then
    echo "postgres-entrypoint: must start as root (it drops to postgres itself)" >&2
    exit 1
fi
install -d -o postgres -g postgres -m 0700 "$PGDATA"
install -d -o postgres -g postgres -m 2775 /run/postgresql

if [ ! -s "$PGDATA/PG_VERSION" ]; then
    if [ -z "${POSTGRES_PASSWORD_FILE:-}" ] || [ ! -s "$POSTGRES_PASSWORD_FILE" ]; then
        echo "postgres-entrypoint: POSTGRES_PASSWORD_FILE must name a non-empty file" >&2
        exit 1
    fi
    pwfile=$(mktemp)
    trap 'rm -f "$pwfile"' EXIT
    head -n 1 "$POSTGRES_PASSWORD_FILE" | tr -d '\r\n' >"$pwfile"
    chown postgres "$pwfile"
    chmod 0400 "$pwfile"
    # As in the official image: the superuser is POSTGRES_USER, with the password; every login
    # over TCP needs it (SCRAM), and the socket inside this container needs none, so that
    # `docker compose exec db psql -U forgeward` works as it does there.
    as_postgres initdb --username="$POSTGRES_USER" --pwfile="$pwfile" \
        --auth-host=scram-sha-256 --auth-local=trust --encoding=UTF8 --locale=C.UTF-8 >&2
    rm -f "$pwfile"
    echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
    echo "listen_addresses = '*'" >>"$PGDATA/postgresql.conf"
    if [ "$POSTGRES_DB" != postgres ]; then
        echo "CREATE DATABASE \"$POSTGRES_DB\" OWNER \"$POSTGRES_USER\";" \
            | as_postgres postgres --single -D "$PGDATA" postgres >/dev/null
    fi
    echo "postgres-entrypoint: made the cluster in $PGDATA" >&2
fi

exec setpriv --reuid=postgres --regid=postgres --init-groups -- postgres -D "$PGDATA"
