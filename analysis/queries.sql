-- ctrlbench: DuckDB queries over one results directory's CSVs.
--
-- Usage (from inside a results directory; the globs are relative to it):
--   cd results/<UTC timestamp>-<experiment>
--   duckdb -c ".read ../../analysis/queries.sql"
-- or in Python:  import duckdb; duckdb.sql(open("…/queries.sql").read())  (runs
-- every statement and prints only the last one: run the views, then pick queries).
--
-- The views come first; each query after them stands alone. Conventions match
-- `ctrlbench report`:
--   * a row with scrape_ok = 0 is a failed scrape (empty values, never zeros): skipped;
--   * counters are deltas from each run's baseline (first scrape_ok = 1 row) to its
--     last good row, taken as Prometheus's increase() takes them: a counter lower
--     than at the previous good row was reset (a controller restarted by a fault)
--     and counts from 0 (macro inc below); summed gap by gap;
--   * rates divide by the REAL gap between consecutive good rows (never 1 s);
--   * time zero is the load start: objects.csv's last created_at minus
--     summary.json's load.seconds;
--   * percentiles from buckets interpolate as PromQL's histogram_quantile does;
--     an empty bucket cell (the histogram did not exist yet) counts 0;
--   * time-to-Ready covers every created object, never-Ready ones as +infinity.
-- analysis/test_queries.py (run by scripts/test.sh) compares every query with
-- the report on the recorded fixtures in crates/ctrlbench-report/tests/data.

-- A counter's increase from its previous good value `p` to `v`: a drop is a
-- reset (the process restarted), so the new value is all increase.
CREATE OR REPLACE MACRO inc(v, p) AS
    CASE WHEN p IS NULL THEN 0 WHEN v >= p THEN v - p ELSE v END;

-- One row per scrape of each controller, with its run's scale / variant / repeat.
CREATE OR REPLACE VIEW metrics AS
SELECT
    regexp_extract(filename, 'N(\d+)/', 1)::INTEGER        AS scale,
    regexp_extract(filename, 'N\d+/([^/]+)/rep', 1)        AS variant,
    regexp_extract(filename, '/rep(\d+)/', 1)::INTEGER     AS rep,
    "timestamp"::TIMESTAMP                                 AS ts,
    * EXCLUDE (filename, "timestamp", controller)
FROM read_csv('N*/*/rep*/metrics-*.csv', filename = true, union_by_name = true,
              types = {'timestamp': 'VARCHAR'});

CREATE OR REPLACE VIEW objects AS
SELECT
    regexp_extract(filename, 'N(\d+)/', 1)::INTEGER        AS scale,
    regexp_extract(filename, 'N\d+/([^/]+)/rep', 1)        AS variant,
    regexp_extract(filename, '/rep(\d+)/', 1)::INTEGER     AS rep,
    name,
    nullif(created_at, '')::TIMESTAMP                      AS created_at,
    nullif(ready_at, '')::TIMESTAMP                        AS ready_at
FROM read_csv('N*/*/rep*/objects.csv', filename = true, all_varchar = true);

CREATE OR REPLACE VIEW summaries AS
SELECT scale, variant, "repeat" AS rep, load.seconds AS load_seconds, load.created AS created,
       incomplete, stop_reason, scrapes.failed AS failed_scrapes
FROM read_json('N*/*/rep*/summary.json');

-- Time zero per run (load start).
CREATE OR REPLACE VIEW origins AS
SELECT o.scale, o.variant, o.rep,
       max(o.created_at) - to_microseconds((any_value(s.load_seconds) * 1e6)::BIGINT) AS t0
FROM objects o JOIN summaries s USING (scale, variant, rep)
GROUP BY ALL;

-- 1. Queue depth over time (seconds since load start); failed scrapes left out.
SELECT m.scale, m.variant, m.rep,
       round(epoch(m.ts) - epoch(o.t0), 3) AS t_s,
       m.queue_depth
FROM metrics m JOIN origins o USING (scale, variant, rep)
WHERE m.scrape_ok = 1
ORDER BY ALL;

-- 2. Per-second rates between consecutive good scrapes, over the real gap.
SELECT scale, variant, rep, ts,
       round(epoch(ts) - epoch(prev_ts), 3)                                   AS gap_s,
       inc(reconciles, prev_reconciles) / (epoch(ts) - epoch(prev_ts))        AS reconciles_per_s,
       inc(queue_adds_total, prev_adds) / (epoch(ts) - epoch(prev_ts))        AS adds_per_s,
       inc(rest_writes_total, prev_writes) / (epoch(ts) - epoch(prev_ts))     AS writes_per_s
FROM (
    SELECT *,
           reconcile_success_total + reconcile_error_total + reconcile_requeue_total AS reconciles,
           lag(ts) OVER w                                                      AS prev_ts,
           lag(reconcile_success_total + reconcile_error_total + reconcile_requeue_total) OVER w
                                                                               AS prev_reconciles,
           lag(queue_adds_total) OVER w                                        AS prev_adds,
           lag(rest_writes_total) OVER w                                       AS prev_writes
    FROM metrics
    WHERE scrape_ok = 1
    WINDOW w AS (PARTITION BY scale, variant, rep ORDER BY ts)
)
WHERE prev_ts IS NOT NULL AND ts > prev_ts
ORDER BY scale, variant, rep, ts;

-- 3. Retry rate: retries per reconcile, baseline → last good row.
SELECT scale, variant, rep,
       sum(inc(queue_retries_total, p_retries))                             AS retries,
       sum(inc(reconcile_success_total, p_success) + inc(reconcile_error_total, p_error))
                                                                             AS reconciles,
       retries / nullif(reconciles, 0)                                       AS retries_per_reconcile,
       sum(inc(reconcile_latency_sum, p_lsum))
         / nullif(sum(inc(reconcile_latency_count, p_lcount)), 0)           AS mean_reconcile_s
FROM (
    SELECT *,
           lag(queue_retries_total) OVER w     AS p_retries,
           lag(reconcile_success_total) OVER w AS p_success,
           lag(reconcile_error_total) OVER w   AS p_error,
           lag(reconcile_latency_sum) OVER w   AS p_lsum,
           lag(reconcile_latency_count) OVER w AS p_lcount
    FROM metrics
    WHERE scrape_ok = 1
    WINDOW w AS (PARTITION BY scale, variant, rep ORDER BY ts)
)
GROUP BY ALL
ORDER BY ALL;

-- 4. Convergence: the first moment Ready == N (our own watch, objects.csv): the
--    latest ready_at minus the load start, only once N objects are Ready; and
--    time-to-Ready p50 / p99 (ready_at - created_at) over EVERY created object,
--    linear interpolation between closest ranks (h = (n-1)q, as the report).
--    A never-Ready object is censored at +infinity, so a percentile that
--    reaches one is infinity (the report's "> window"); leaving those objects
--    out would describe only the lucky ones.
SELECT o.scale, o.variant, o.rep,
       count(o.ready_at)                                          AS ready,
       o.scale - count(o.ready_at)                                AS left_,
       CASE WHEN count(o.ready_at) >= o.scale
            THEN epoch(max(o.ready_at)) - epoch(any_value(z.t0)) END
                                                                  AS convergence_s,
       quantile_cont(coalesce(epoch(o.ready_at) - epoch(o.created_at), 'infinity'::DOUBLE), 0.5)
           FILTER (WHERE o.created_at IS NOT NULL)                AS ttr_p50_s,
       quantile_cont(coalesce(epoch(o.ready_at) - epoch(o.created_at), 'infinity'::DOUBLE), 0.99)
           FILTER (WHERE o.created_at IS NOT NULL)                AS ttr_p99_s
FROM objects o JOIN origins z USING (scale, variant, rep)
GROUP BY o.scale, o.variant, o.rep
ORDER BY ALL;

-- 5. Reconcile latency p50 / p90 / p99 from the histogram buckets (deltas
--    baseline → last good row), interpolated like PromQL's histogram_quantile:
--    linear inside the bucket, lower bound 0 for the first one, and the highest
--    finite bound when the rank falls in +Inf.
--    An empty bucket cell means the series did not exist yet: controller-runtime
--    registers the histogram only at the first reconcile, so a Go controller's
--    baseline row has empty (NULL) buckets. They count 0. UNPIVOT drops NULL
--    values unless told INCLUDE NULLS (DuckDB accepts it only in the SQL-standard
--    form used here): without it the baseline row vanished, the first row WITH
--    buckets became the "baseline" and a Go run's deltas (all its reconciles
--    done by then) came out 0, so the run had no row at all.
WITH long AS (
    SELECT * FROM (SELECT * FROM metrics WHERE scrape_ok = 1)
    UNPIVOT INCLUDE NULLS (cum FOR bucket IN (COLUMNS('reconcile_latency_le_.*')))
),
steps AS (
    SELECT scale, variant, rep, bucket,
           inc(coalesce(cum, 0),
               lag(coalesce(cum, 0)) OVER (PARTITION BY scale, variant, rep, bucket ORDER BY ts))
                                                                              AS step
    FROM long
),
edges AS (
    SELECT scale, variant, rep,
           CASE WHEN bucket LIKE '%+Inf' THEN 'inf'::DOUBLE
                ELSE replace(bucket, 'reconcile_latency_le_', '')::DOUBLE END AS le,
           sum(step)                                                          AS cum
    FROM steps GROUP BY ALL
),
b AS (
    SELECT *,
           lag(le, 1, 0) OVER w  AS lo,
           lag(cum, 1, 0) OVER w AS below,
           max(cum) OVER (PARTITION BY scale, variant, rep) AS total,
           max(le) FILTER (WHERE le < 'inf'::DOUBLE) OVER (PARTITION BY scale, variant, rep) AS top
    FROM edges
    WINDOW w AS (PARTITION BY scale, variant, rep ORDER BY le)
),
q AS (SELECT unnest([0.5, 0.9, 0.99]::DOUBLE[]) AS q),
hit AS (
    SELECT b.*, q.q, q.q * total AS rank,
           row_number() OVER (PARTITION BY scale, variant, rep, q.q ORDER BY le) AS first
    FROM b, q
    WHERE total > 0 AND cum >= q.q * total
)
SELECT scale, variant, rep, q,
       CASE WHEN le = 'inf'::DOUBLE THEN top
            ELSE lo + (le - lo) * (rank - below) / (cum - below) END AS latency_s
FROM hit
WHERE first = 1
ORDER BY scale, variant, rep, q;
