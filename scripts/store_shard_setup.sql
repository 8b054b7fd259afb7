-- store_shard_setup.sql — spreads a PostgreSQL profile store's count tables
-- (ranges, branches, stats, and since schema version 4 contexts, ip_hits,
-- ip_calls, ip_unplaced) over other PostgreSQL servers with PostgreSQL's
-- own sharding: each becomes a table hash-partitioned on the build-id key
-- (bid) whose partitions are postgres_fdw foreign tables,
-- one per shard. profiles and schema_version stay on this server, the
-- coordinator, which is the database `pgokit store` connects to; nothing in
-- pgokit changes (a pull's aggregate filters and groups on bid, so it reads
-- one partition and its GROUP BY ... SUM runs on that shard).
--
-- Before: `pgokit store init` on the coordinator and on every shard (a shard
-- holds the same count tables; its profiles table stays empty). Rows already
-- stored on the coordinator move to their shards. Run once, as a superuser:
--
--   psql -v ON_ERROR_STOP=1 -v shards=HOST:PORT/DB,HOST:PORT/DB,... -v shard_user=ROLE \
--        -f scripts/store_shard_setup.sql COORDINATOR_URL
--
-- shard_user is the role the coordinator logs in as on the shards (a user
-- mapping for the current role; add `password` to it where the shards ask
-- for one). One transaction: on any error nothing changes.
--
-- A store sharded at schema version 3: run `pgokit store init` on every
-- shard, then on the coordinator (the new columns reach the foreign
-- partitions' definitions; the new tables are made on the coordinator),
-- then this script again: it keeps the shard servers it made before
-- (-v shards must list the same number of them) and partitions the tables
-- that are not yet. Run when nothing is left to partition, it refuses.
\set ON_ERROR_STOP on
BEGIN;
CREATE EXTENSION IF NOT EXISTS postgres_fdw;
SET LOCAL pgokit.shards = :'shards';
SET LOCAL pgokit.shard_user = :'shard_user';
DO $$
DECLARE
    shards text[] := string_to_array(current_setting('pgokit.shards'), ',');
    n int := coalesce(array_length(shards, 1), 0);
    made int := (SELECT count(*) FROM pg_foreign_server WHERE srvname ~ '^pgokit_shard[0-9]+$');
    -- the tables still plain (relkind r), in the schema's order
    todo text[] := ARRAY(SELECT t FROM unnest(ARRAY['ranges', 'branches', 'stats', 'contexts', 'ip_hits', 'ip_calls',
                                                    'ip_unplaced']) WITH ORDINALITY u(t, o)
                         JOIN pg_class c ON c.oid = to_regclass(u.t) WHERE c.relkind = 'r' ORDER BY u.o);
    addr text[];
    t text;
BEGIN
    IF (SELECT max(version) FROM schema_version) IS DISTINCT FROM 4 THEN
        RAISE EXCEPTION 'the store is not at schema version 4 (run `pgokit store init` first)';
    END IF;
    IF n < 1 THEN
        RAISE EXCEPTION 'no shards (-v shards=HOST:PORT/DB,...)';
    END IF;
    IF coalesce(array_length(todo, 1), 0) = 0 THEN
        RAISE EXCEPTION 'every count table is sharded already';
    END IF;
    IF made > 0 AND made <> n THEN
        RAISE EXCEPTION 'the store is sharded over % servers, not % (-v shards lists them all)', made, n;
    END IF;
    FOR i IN 1..n LOOP
        EXIT WHEN made > 0; -- the servers of an earlier run serve the new tables
        addr := regexp_match(shards[i], '^([^:/]+):([0-9]+)/(.+)$');
        IF addr IS NULL THEN
            RAISE EXCEPTION 'shard % is "%", not HOST:PORT/DB', i, shards[i];
        END IF;
        -- fetch_size: a pull streams every merged row of its partition
        -- through one cursor; batch_size: INSERTs routed to a shard
        EXECUTE format('CREATE SERVER pgokit_shard%s FOREIGN DATA WRAPPER postgres_fdw '
                       'OPTIONS (host %L, port %L, dbname %L, fetch_size %L, batch_size %L)',
                       i - 1, addr[1], addr[2], addr[3], '10000', '1000');
        EXECUTE format('CREATE USER MAPPING FOR CURRENT_USER SERVER pgokit_shard%s OPTIONS (user %L)',
                       i - 1, current_setting('pgokit.shard_user'));
    END LOOP;
    FOREACH t IN ARRAY todo LOOP
        EXECUTE format('ALTER TABLE %I RENAME TO %I', t, t || '_unsharded');
        EXECUTE format('CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS) PARTITION BY HASH (bid)', t, t || '_unsharded');
        FOR i IN 1..n LOOP
            EXECUTE format('CREATE FOREIGN TABLE %I PARTITION OF %I FOR VALUES WITH (MODULUS %s, REMAINDER %s) '
                           'SERVER pgokit_shard%s OPTIONS (schema_name %L, table_name %L)',
                           t || '_shard' || (i - 1), t, n, i - 1, i - 1, 'public', t);
        END LOOP;
        EXECUTE format('INSERT INTO %I SELECT * FROM %I', t, t || '_unsharded');
        EXECUTE format('DROP TABLE %I', t || '_unsharded');
    END LOOP;
    -- grouping by the partition key aggregates each partition whole, which
    -- postgres_fdw then ships to its shard
    EXECUTE format('ALTER DATABASE %I SET enable_partitionwise_aggregate = on', current_database());
END
$$;
COMMIT;
