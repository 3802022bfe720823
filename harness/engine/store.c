/*
 * store.c - the results database (SQLite); see store.h.
 *
 * Durability: journal_mode=WAL with synchronous=NORMAL.  A commit is in
 * the WAL (in the page cache) when it returns, so every stored result
 * survives a SIGKILL or crash of perturb, and the database is never left
 * half-written; a power loss or kernel crash can lose the last results
 * (not corrupt the file).  synchronous=FULL would fsync the WAL at every
 * commit: measured with bench/harness-overhead.sh (/bin/true x 500, quiet
 * machine) that cost 0.4 ms per run (perturb's total 0.61-0.65 s against
 * 0.41 s with NORMAL; hyperfine 0.37-0.47 s), more when other I/O is going
 * on, without lowering the runs' own times (median 0.67-0.79 ms with FULL,
 * 0.64 ms with NORMAL).
 *
 * Every statement is prepared from constant SQL; values are always bound.
 * The one exception is "PRAGMA user_version = N", which cannot take a
 * parameter: N is an int from this file, never outside input.
 */
#include "store.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <limits.h>
#include <sqlite3.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "backends/backend.h"
#include "backends/tracers.h"
#include "lib/machine.h"
#include "lib/util.h"

/* Statements run once per stored run: prepared once, kept until close, so
 * that storing a result parses no SQL (bench/harness-overhead.sh). */
enum cached_stmt { ST_BEGIN, ST_COMMIT, ST_RESULT, ST_VALUE, ST_COUNT };

struct store {
	sqlite3 *db;
	char *path;
	int readonly;
	sqlite3_stmt *cache[ST_COUNT];
};

/*
 * Schema migrations: migrations[N] takes a database from user_version N to
 * N + 1.  store_open() runs each one in its own transaction together with
 * the user_version update.  To change the schema: add a function, append it
 * here, bump STORE_SCHEMA_VERSION in store.h.  Never edit a released one.
 */
static const char schema_v1[] =
	"CREATE TABLE experiments ("
	" id INTEGER PRIMARY KEY,"
	" name TEXT,"
	" path TEXT,"			/* as first given */
	" text TEXT NOT NULL,"
	" sha256 TEXT NOT NULL UNIQUE);"

	"CREATE TABLE runs ("
	" id INTEGER PRIMARY KEY AUTOINCREMENT,"	/* ids never reused */
	" experiment_id INTEGER NOT NULL REFERENCES experiments(id),"
	" name TEXT,"
	" baseline TEXT,"
	" seed TEXT NOT NULL,"		/* decimal uint64: may exceed int64 */
	" \"order\" TEXT NOT NULL,"
	" argv TEXT,"
	" started TEXT NOT NULL,"
	" ended TEXT,"
	" status TEXT NOT NULL CHECK (status IN"
	"  ('running', 'completed', 'interrupted', 'failed')),"
	" perturb_version TEXT,"
	" machine_json TEXT,"
	" kernel_release TEXT,"
	" kernel_cmdline TEXT,"
	" cpu_model TEXT,"
	" cores INTEGER,"
	" governor TEXT,"
	" smt TEXT,"
	" aslr TEXT,"
	" loadavg TEXT);"
	"CREATE INDEX runs_by_experiment ON runs(experiment_id);"

	/*
	 * The per-run tables are WITHOUT ROWID with (run_id, ...) primary
	 * keys: the table itself is the index "by run_id" that the report
	 * queries walk, in order.
	 */
	"CREATE TABLE variants ("
	" run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
	" idx INTEGER NOT NULL,"
	" name TEXT NOT NULL,"
	" description TEXT,"
	" PRIMARY KEY (run_id, idx),"
	" UNIQUE (run_id, name)) WITHOUT ROWID;"

	"CREATE TABLE workloads ("
	" run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
	" idx INTEGER NOT NULL,"
	" name TEXT NOT NULL,"
	" kind TEXT NOT NULL CHECK (kind IN ('real', 'micro')),"
	" description TEXT,"
	" PRIMARY KEY (run_id, idx),"
	" UNIQUE (run_id, name)) WITHOUT ROWID;"

	"CREATE TABLE plan ("
	" run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
	" seq INTEGER NOT NULL,"
	" variant TEXT NOT NULL,"
	" workload TEXT NOT NULL,"
	" variant_idx INTEGER NOT NULL,"
	" workload_idx INTEGER NOT NULL,"
	" repetition INTEGER NOT NULL,"
	" warmup INTEGER NOT NULL,"
	" round INTEGER NOT NULL,"
	" PRIMARY KEY (run_id, seq),"
	" FOREIGN KEY (run_id, variant_idx) REFERENCES variants(run_id, idx),"
	" FOREIGN KEY (run_id, workload_idx) REFERENCES workloads(run_id, idx)"
	") WITHOUT ROWID;"

	"CREATE TABLE results ("
	" run_id INTEGER NOT NULL,"
	" seq INTEGER NOT NULL,"
	" status TEXT NOT NULL CHECK (status IN"
	"  ('ok', 'failed', 'crashed', 'timeout', 'error')),"
	" exit_code INTEGER,"		/* NULL unless the child exited */
	" signal INTEGER,"		/* NULL unless crashed */
	" reason TEXT,"
	" started TEXT,"
	" wall_s REAL,"
	" user_s REAL,"
	" sys_s REAL,"
	" maxrss_kb INTEGER,"
	" output_tail TEXT,"		/* failed runs only */
	" PRIMARY KEY (run_id, seq),"
	" FOREIGN KEY (run_id, seq) REFERENCES plan(run_id, seq) ON DELETE CASCADE"
	") WITHOUT ROWID;"

	"CREATE TABLE metric_values ("
	" run_id INTEGER NOT NULL,"
	" seq INTEGER NOT NULL,"
	" metric TEXT NOT NULL,"
	" value REAL NOT NULL,"
	" unit TEXT NOT NULL DEFAULT '',"
	" scaled INTEGER NOT NULL DEFAULT 0,"	/* counters: multiplexed, value scaled */
	" time_enabled_ns INTEGER,"	/* counters (perf_event): NULL otherwise */
	" time_running_ns INTEGER,"
	" PRIMARY KEY (run_id, seq, metric),"
	" FOREIGN KEY (run_id, seq) REFERENCES results(run_id, seq) ON DELETE CASCADE"
	") WITHOUT ROWID;"

	"CREATE TABLE unavailable ("
	" run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
	" metric TEXT NOT NULL,"
	" reason TEXT,"
	" PRIMARY KEY (run_id, metric)) WITHOUT ROWID;";

static int migrate_0_to_1(sqlite3 *db)
{
	return sqlite3_exec(db, schema_v1, NULL, NULL, NULL);
}

/* v2: plan.block, the unit the executor enters at once (a boot of a
 * boot: variant); plans stored by v1 get 0 (one block per variant).
 * variants.timebase: "virtual" for a deterministic (QEMU -icount) variant,
 * whose times follow executed instructions, else "real". */
static int migrate_1_to_2(sqlite3 *db)
{
	return sqlite3_exec(db, "ALTER TABLE plan ADD COLUMN block INTEGER NOT NULL DEFAULT 0;"
			    "ALTER TABLE variants ADD COLUMN timebase TEXT NOT NULL DEFAULT 'real';",
			    NULL, NULL, NULL);
}

/* matrix: the parameters of each instance of a variant's or workload's
 * matrix (engine/matrix.h); x is the value on a numeric axis, NULL when it
 * is not a number. */
static int migrate_matrix(sqlite3 *db)
{
	return sqlite3_exec(db, "CREATE TABLE IF NOT EXISTS matrix ("
			    " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
			    " kind TEXT NOT NULL CHECK (kind IN ('variant', 'workload')),"
			    " name TEXT NOT NULL,"
			    " base TEXT NOT NULL,"
			    " param TEXT NOT NULL,"
			    " value TEXT NOT NULL,"
			    " x REAL,"
			    " is_list INTEGER NOT NULL DEFAULT 0,"
			    " PRIMARY KEY (run_id, kind, name, param)) WITHOUT ROWID;",
			    NULL, NULL, NULL);
}

/* Add column col to table (ddl: its ALTER TABLE) unless it is there:
 * what makes a migration that adds a column order-independent. */
static int add_missing_column(sqlite3 *db, const char *table, const char *col, const char *ddl)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(db, "SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2",
				    -1, &st, NULL);

	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(st, 2, col, -1, SQLITE_STATIC);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc == SQLITE_ROW)
		return SQLITE_OK;
	if (rc != SQLITE_DONE)
		return rc;
	return sqlite3_exec(db, ddl, NULL, NULL, NULL);
}

/* v3: results.output_dropped, the bytes of the run's output that were not
 * kept (core/runner.h: the bound); 0 for results stored before.  Added
 * only when missing, so that it does not depend on its place in the list. */
static int migrate_output_dropped(sqlite3 *db)
{
	return add_missing_column(db, "results", "output_dropped", "ALTER TABLE results ADD COLUMN"
				  " output_dropped INTEGER NOT NULL DEFAULT 0;");
}

/* v5: shards, the parts of a study split for a cluster (store.h,
 * docs/distributed.md).  IF NOT EXISTS: order-independent. */
static int migrate_add_shards(sqlite3 *db)
{
	return sqlite3_exec(db, "CREATE TABLE IF NOT EXISTS shards ("
			    " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
			    " shard INTEGER NOT NULL,"
			    " n_shards INTEGER NOT NULL,"
			    " seq_lo INTEGER NOT NULL,"
			    " seq_hi INTEGER NOT NULL,"
			    " db TEXT,"
			    " job TEXT,"
			    " node TEXT,"
			    " plan_sha256 TEXT,"
			    " PRIMARY KEY (run_id, shard)) WITHOUT ROWID;",
			    NULL, NULL, NULL);
}

/* v6: calibration, a workload's calibration: block (the hits of a
 * tracer's point; struct workload's calib_*), and tracer_variants, each
 * traced variant's tracer and attach type (backends/tracers.h): what the
 * report's cost per event and overhead compensation read
 * (reports/calib.h).  IF NOT EXISTS: order-independent. */
static int migrate_calibration(sqlite3 *db)
{
	return sqlite3_exec(db, "CREATE TABLE IF NOT EXISTS calibration ("
			    " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
			    " workload TEXT NOT NULL,"
			    " hits REAL,"
			    " hits_metric TEXT,"
			    " metric TEXT,"
			    " PRIMARY KEY (run_id, workload)) WITHOUT ROWID;"
			    "CREATE TABLE IF NOT EXISTS tracer_variants ("
			    " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
			    " variant TEXT NOT NULL,"
			    " tracer TEXT NOT NULL,"
			    " attach TEXT NOT NULL,"
			    " PRIMARY KEY (run_id, variant)) WITHOUT ROWID;",
			    NULL, NULL, NULL);
}

/* v7: results.cpu and results.start_mono (order: duet: where and when each run
 * of a pair ran; NULL when not known).  Order-independent: each column is
 * added only when it is missing. */
static int migrate_duet(sqlite3 *db)
{
	int rc = add_missing_column(db, "results", "cpu", "ALTER TABLE results ADD COLUMN cpu INTEGER;");

	if (rc == SQLITE_OK)
		rc = add_missing_column(db, "results", "start_mono",
					"ALTER TABLE results ADD COLUMN start_mono REAL;");
	return rc;
}

/* v8: what a study's blocks cost (store.h; the report's runs per boot,
 * docs/report-json.md): block_entries, one row per entry of a variant's
 * block (a boot of a boot: variant) with the seconds its backend's enter()
 * and leave() took, and results.cost_s, the seconds the engine spent on
 * one run (NULL: not measured).  Order-independent: IF NOT EXISTS, and
 * the column added only when missing. */
static int migrate_block_costs(sqlite3 *db)
{
	int rc = sqlite3_exec(db, "CREATE TABLE IF NOT EXISTS block_entries ("
			      " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
			      " first_seq INTEGER NOT NULL,"
			      " enter_s REAL NOT NULL,"
			      " leave_s REAL,"
			      " PRIMARY KEY (run_id, first_seq)) WITHOUT ROWID;",
			      NULL, NULL, NULL);

	if (rc == SQLITE_OK)
		rc = add_missing_column(db, "results", "cost_s",
					"ALTER TABLE results ADD COLUMN cost_s REAL;");
	return rc;
}

/* v9: calibration.ops_metric, a calibration: block's ops_metric (struct
 * workload's calib_ops_metric; NULL when none): the report measures a
 * tracer's events per hit from it (reports/calib.h).  Order-independent:
 * the column is added only when it is missing. */
static int migrate_calib_ops(sqlite3 *db)
{
	return add_missing_column(db, "calibration", "ops_metric",
				  "ALTER TABLE calibration ADD COLUMN ops_metric TEXT;");
}

/* Each returns an SQLite result code. */
static int (*const migrations[])(sqlite3 *db) = {
	migrate_0_to_1,
	migrate_1_to_2,
	migrate_matrix,
	migrate_output_dropped,
	migrate_add_shards,
	migrate_calibration,
	migrate_duet,
	migrate_block_costs,
	migrate_calib_ops,
};

_Static_assert(ARRAY_SIZE(migrations) == STORE_SCHEMA_VERSION,
	       "one migration per schema version");

static const char *const run_statuses[] = {
	"running", "completed", "interrupted", "failed",
};

static int db_error(struct store *s, const char *what)
{
	return error("cannot %s results database '%s': %s", what, s->path,
		     sqlite3_errmsg(s->db));
}

static int write_error(struct store *s)
{
	return db_error(s, "write");
}

static int read_error(struct store *s)
{
	return db_error(s, "read");
}

static int prepare(struct store *s, const char *sql, sqlite3_stmt **st,
		   int (*fail)(struct store *))
{
	if (sqlite3_prepare_v2(s->db, sql, -1, st, NULL) != SQLITE_OK) {
		sqlite3_finalize(*st);
		*st = NULL;
		return fail(s);
	}
	return 0;
}

/* prepare() a query of one run's rows, run_id bound to ?1. */
static int prepare_run(struct store *s, const char *sql, int64_t run_id,
		       sqlite3_stmt **st)
{
	if (prepare(s, sql, st, read_error) < 0)
		return -1;
	if (sqlite3_bind_int64(*st, 1, run_id)) {
		sqlite3_finalize(*st);
		*st = NULL;
		return read_error(s);
	}
	return 0;
}

/* Step a statement that returns no rows, then make it reusable. */
static int step_done(struct store *s, sqlite3_stmt *st)
{
	int ret = 0;
	if (sqlite3_step(st) != SQLITE_DONE)
		ret = write_error(s);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return ret;
}

/* Step st, whose values were bound with their result codes or'ed into
 * bind_rc (0: all bound), as step_done(). */
static int step_bound(struct store *s, sqlite3_stmt *st, int bind_rc)
{
	if (bind_rc)
		return write_error(s);
	return step_done(s, st);
}

/* The cached statement for slot (prepared on first use), reset and with no
 * bindings.  Never finalized by the caller. */
static int cached(struct store *s, enum cached_stmt slot, const char *sql,
		  sqlite3_stmt **st)
{
	if (!s->cache[slot] && prepare(s, sql, &s->cache[slot], write_error) < 0)
		return -1;
	sqlite3_reset(s->cache[slot]);
	sqlite3_clear_bindings(s->cache[slot]);
	*st = s->cache[slot];
	return 0;
}

static int exec_cached(struct store *s, enum cached_stmt slot, const char *sql)
{
	sqlite3_stmt *st;
	if (cached(s, slot, sql, &st) < 0)
		return -1;
	return step_done(s, st);
}

static int exec(struct store *s, const char *sql, int (*fail)(struct store *))
{
	if (sqlite3_exec(s->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		return fail(s);
	return 0;
}

static int begin(struct store *s)
{
	/* IMMEDIATE: take the write lock now (waiting up to busy_timeout)
	 * rather than fail half-way on a read-to-write upgrade. */
	return exec_cached(s, ST_BEGIN, "BEGIN IMMEDIATE");
}

static int commit(struct store *s)
{
	return exec_cached(s, ST_COMMIT, "COMMIT");
}

static void rollback(struct store *s)
{
	if (!sqlite3_get_autocommit(s->db))
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
}

static char *column_dup(sqlite3_stmt *st, int col)
{
	const unsigned char *t = sqlite3_column_text(st, col);
	return t ? xstrdup((const char *)t) : NULL;
}

/*
 * A kind of row read into an array: elements of size bytes, each filled
 * from a result row by fill(); the malloc'd strings of an element are its
 * fields at offsets strs[0 .. nstrs - 1] (freed by rows_free()).
 */
struct row_kind {
	size_t size;
	void (*fill)(sqlite3_stmt *st, void *row);
	const size_t *strs;
	size_t nstrs;
};

static void rows_free(const struct row_kind *k, void *rows, size_t n)
{
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < k->nstrs; j++)
			free(*(char **)((char *)rows + i * k->size + k->strs[j]));
	free(rows);
}

/* Every row of st (prepared; finalized here) into *out, n of them (NULL
 * and 0 when none).  On a read error -1 (printed), nothing kept. */
static int rows_collect(struct store *s, sqlite3_stmt *st, const struct row_kind *k,
			void **out, size_t *n)
{
	void *rows = NULL;
	size_t nr = 0, alloc = 0;
	int rc;

	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		grow_array(&rows, &alloc, nr + 1, k->size);
		k->fill(st, (char *)rows + nr++ * k->size);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		rows_free(k, rows, nr);
		*out = NULL;
		*n = 0;
		return read_error(s);
	}
	*out = rows;
	*n = nr;
	return 0;
}

/* rows_collect() of one run's query (prepare_run()). */
static int rows_of_run(struct store *s, const char *sql, int64_t run_id,
		       const struct row_kind *k, void **out, size_t *n)
{
	sqlite3_stmt *st = NULL;

	*out = NULL;
	*n = 0;
	if (prepare_run(s, sql, run_id, &st) < 0)
		return -1;
	return rows_collect(s, st, k, out, n);
}

static int bind_opt_text(sqlite3_stmt *st, int i, const char *t)
{
	if (!t || !*t)
		return sqlite3_bind_null(st, i);
	return sqlite3_bind_text(st, i, t, -1, SQLITE_STATIC);
}

static int user_version(struct store *s, int *version)
{
	sqlite3_stmt *st = NULL;
	int ret = 0;

	if (prepare(s, "PRAGMA user_version", &st, read_error) < 0)
		return -1;
	if (sqlite3_step(st) != SQLITE_ROW)
		ret = read_error(s);
	else
		*version = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return ret;
}

/* A database with user_version 0 is ours only while it is empty. */
static int check_empty(struct store *s)
{
	sqlite3_stmt *st = NULL;
	int ret = 0;

	if (prepare(s, "SELECT count(*) FROM sqlite_master", &st, read_error) < 0)
		return -1;
	if (sqlite3_step(st) != SQLITE_ROW)
		ret = read_error(s);
	else if (sqlite3_column_int(st, 0) > 0)
		ret = error("'%s' is an SQLite database but not a perturb results database",
			    s->path);
	sqlite3_finalize(st);
	return ret;
}

static int migrate(struct store *s)
{
	int version, ret = 0;
	char *sql = NULL;

	if (begin(s) < 0)
		return -1;
	/* Read again under the write lock: another perturb may have
	 * migrated the file since we looked. */
	if (user_version(s, &version) < 0)
		goto fail;
	if (version == 0 && check_empty(s) < 0)
		goto fail;
	for (; version < STORE_SCHEMA_VERSION; version++) {
		if (migrations[version](s->db) != SQLITE_OK) {
			error("cannot upgrade results database '%s' from schema version %d to %d: %s",
			      s->path, version, version + 1, sqlite3_errmsg(s->db));
			goto fail;
		}
	}
	sql = sqlite3_mprintf("PRAGMA user_version = %d", STORE_SCHEMA_VERSION);
	if (!sql) {
		error("cannot write results database '%s': out of memory", s->path);
		goto fail;
	}
	if (exec(s, sql, write_error) < 0 || commit(s) < 0)
		goto fail;
	goto out;
fail:
	rollback(s);
	ret = -1;
out:
	sqlite3_free(sql);
	return ret;
}

static int configure(struct store *s)
{
	sqlite3_stmt *st = NULL;
	const char *mode;
	int ret = 0;

	/* Set outside any transaction (foreign_keys is a no-op inside one). */
	if (exec(s, "PRAGMA foreign_keys = ON", read_error) < 0 ||
	    exec(s, "PRAGMA synchronous = NORMAL", read_error) < 0)
		return -1;
	if (prepare(s, "PRAGMA journal_mode = WAL", &st, write_error) < 0)
		return -1;
	if (sqlite3_step(st) != SQLITE_ROW) {
		ret = write_error(s);
		goto out;
	}
	mode = (const char *)sqlite3_column_text(st, 0);
	if (!mode || strcmp(mode, "wal"))
		warning("results database '%s' is not in WAL mode (journal_mode=%s)",
			s->path, mode ? mode : "?");
out:
	sqlite3_finalize(st);
	return ret;
}

/* PRAGMA user_version without a message: the SQLite result code. */
static int user_version_quiet(struct store *s, int *version)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(s->db, "PRAGMA user_version", -1, &st, NULL);

	if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		*version = sqlite3_column_int(st, 0);
		rc = SQLITE_OK;
	}
	sqlite3_finalize(st);
	return rc & 0xff;
}

/* Open s->path again, read-only and immutable (a URI, the path
 * percent-encoded).  -1 (printed). */
static int reopen_immutable(struct store *s)
{
	struct strbuf uri = STRBUF_INIT;
	int ret = 0;

	strbuf_addstr(&uri, "file:");
	for (const unsigned char *p = (const unsigned char *)s->path; *p; p++)
		if (*p == '?' || *p == '#' || *p == '%' || *p < 0x21 || *p >= 0x7f)
			strbuf_addf(&uri, "%%%02X", *p);
		else
			strbuf_add(&uri, p, 1);
	strbuf_addstr(&uri, "?immutable=1");
	sqlite3_close(s->db);
	if (sqlite3_open_v2(uri.buf, &s->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI |
			    SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK)
		ret = error("cannot open results database '%s': %s", s->path,
			    s->db ? sqlite3_errmsg(s->db) : "out of memory");
	strbuf_release(&uri);
	return ret;
}

/* Is the open database perturb's?  user_version 0 is ours only while the
 * file is empty (a store being created). */
static int check_ours(struct store *s, int version)
{
	sqlite3_stmt *st = NULL;
	int ret = 0;

	if (version > STORE_SCHEMA_VERSION)
		return error("results database '%s' has schema version %d; this perturb knows version %d at most (upgrade perturb)",
			     s->path, version, STORE_SCHEMA_VERSION);
	if (version > 0 || !s->readonly)
		return 0;
	/* read-only: an empty file or some other program's database */
	if (prepare(s, "SELECT count(*) FROM sqlite_master", &st, read_error) < 0)
		return -1;
	if (sqlite3_step(st) != SQLITE_ROW)
		ret = read_error(s);
	else if (sqlite3_column_int(st, 0) == 0)
		ret = error("'%s' is empty: not a perturb results database (run 'perturb run' "
			    "first, or give --db)", s->path);
	else
		ret = error("'%s' is an SQLite database but not a perturb results database",
			    s->path);
	sqlite3_finalize(st);
	return ret;
}

/*
 * PRAGMA quick_check (every page and every record readable, the b-trees
 * well formed; not the cross-checks of indexes that integrity_check adds):
 * a damaged file would give a report of the rows that still read, without
 * a word.  -1 (printed, with the commands that copy what still reads into
 * a new database) when damaged.
 */
static int check_integrity(struct store *s, int version)
{
	sqlite3_stmt *st = NULL;
	struct strbuf cmd = STRBUF_INIT, what = STRBUF_INIT;
	char *saved = NULL;
	int rc, n = 0, ret = 0;

	if (prepare(s, "PRAGMA quick_check", &st, read_error) < 0)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *t = (const char *)sqlite3_column_text(st, 0);
		if (t && !strcmp(t, "ok"))
			goto out;
		/* a row holds problems a line each (and "*** in database
		 * main ***" headings): the first problem, then how many */
		for (const char *p = t ? t : "?", *e; *p; p = *e ? e + 1 : e) {
			e = strchrnul(p, '\n');
			if (!strncmp(p, "***", 3) || e == p)
				continue;
			if (!n++)
				strbuf_add(&what, p, (size_t)(e - p));
		}
	}
	if (rc != SQLITE_DONE && !n)
		strbuf_addstr(&what, sqlite3_errmsg(s->db));
	else if (n > 1)
		strbuf_addf(&what, " (%d problems)", n);
	saved = xasprintf("%s.recovered", s->path);
	strbuf_addstr(&cmd, "sqlite3 ");
	strbuf_add_shell_word(&cmd, s->path);
	strbuf_addstr(&cmd, " .dump | sed 's/^ROLLBACK; -- due to errors$/COMMIT;/' | sqlite3 ");
	strbuf_add_shell_word(&cmd, saved);
	strbuf_addstr(&cmd, " && sqlite3 ");
	strbuf_add_shell_word(&cmd, saved);
	strbuf_addf(&cmd, " 'PRAGMA user_version = %d'", version);
	ret = error("results database '%s' is damaged (SQLite's quick_check: %s); nothing is "
		    "read from it: a report of the rows that still read would be silently "
		    "partial.\nTo copy what still reads into a new database (the sqlite3 "
		    "program, Debian package sqlite3), then report from the copy with --db:\n  %s",
		    s->path, what.buf, cmd.buf);
out:
	sqlite3_finalize(st);
	strbuf_release(&cmd);
	strbuf_release(&what);
	free(saved);
	return ret;
}

/* A read-only store of an older schema: migrated in a copy in memory, the
 * file untouched. */
static int migrate_in_memory(struct store *s)
{
	sqlite3 *mem = NULL;
	sqlite3_backup *b;
	int rc;

	if (sqlite3_open_v2(":memory:", &mem, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX,
			    NULL) != SQLITE_OK) {
		sqlite3_close(mem);
		return error("cannot read results database '%s': out of memory", s->path);
	}
	b = sqlite3_backup_init(mem, "main", s->db, "main");
	rc = b ? sqlite3_backup_step(b, -1) : sqlite3_errcode(mem);
	if (b)
		sqlite3_backup_finish(b);
	if (rc != SQLITE_DONE) {
		sqlite3_close(mem);
		return read_error(s);
	}
	sqlite3_close(s->db);
	s->db = mem;
	return migrate(s);
}

int store_open(const char *path, enum store_mode mode, struct store **out)
{
	struct store *s = xcalloc(1, sizeof(*s));
	struct stat sb;
	/* NOMUTEX: a connection is only ever used by one thread (perturb has
	 * no threads), so SQLite need not lock a mutex around every call; at
	 * 10^6 runs that locking was 7 % of `perturb report`. */
	int flags = SQLITE_OPEN_NOMUTEX;
	int version;

	*out = NULL;
	s->path = xstrdup(path);
	s->readonly = mode == STORE_READ;
	flags |= s->readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE;
	if (stat(path, &sb) < 0) {
		if (errno != ENOENT) {
			error("cannot open results database '%s': %s", path,
			      strerror(errno));
			goto fail;
		}
		if (mode != STORE_CREATE) {
			error("no results database at '%s'", path);
			goto fail;
		}
		char *dir = dir_name(path);
		int err = mkdir_p(dir, 0777);
		if (err < 0)
			error("cannot create folder '%s': %s", dir, strerror(-err));
		free(dir);
		if (err < 0)
			goto fail;
		flags |= SQLITE_OPEN_CREATE;
	} else if (S_ISDIR(sb.st_mode)) {
		error("cannot open results database '%s': Is a directory", path);
		goto fail;
	} else if (s->readonly && !S_ISREG(sb.st_mode)) {
		error("cannot open results database '%s': not a regular file", path);
		goto fail;
	}

	if (sqlite3_open_v2(path, &s->db, flags, NULL) != SQLITE_OK) {
		error("cannot open results database '%s': %s", path,
		      s->db ? sqlite3_errmsg(s->db) : "out of memory");
		goto fail;
	}
	sqlite3_extended_result_codes(s->db, 1);
	sqlite3_busy_timeout(s->db, 5000);
	/* A WAL database on a read-only medium: SQLite cannot make its -shm
	 * file; nobody can write there either, so read it as immutable. */
	if (s->readonly && user_version_quiet(s, &version) == SQLITE_CANTOPEN &&
	    reopen_immutable(s) < 0)
		goto fail;
	/* The first read: a file that is not SQLite fails here. */
	if (user_version(s, &version) < 0 || check_ours(s, version) < 0)
		goto fail;
	if (s->readonly) {
		if (check_integrity(s, version) < 0)
			goto fail;
		if (version < STORE_SCHEMA_VERSION && migrate_in_memory(s) < 0)
			goto fail;
		*out = s;
		return 0;
	}
	if (configure(s) < 0)
		goto fail;
	if (version < STORE_SCHEMA_VERSION && migrate(s) < 0)
		goto fail;
	*out = s;
	return 0;
fail:
	store_close(s);
	return -1;
}

void store_close(struct store *s)
{
	if (!s)
		return;
	for (int i = 0; i < ST_COUNT; i++)
		sqlite3_finalize(s->cache[i]);
	sqlite3_close(s->db);
	free(s->path);
	free(s);
}

void run_header_release(struct run_header *h)
{
	free(h->experiment);
	free(h->path);
	free(h->baseline);
	free(h->order);
	free(h->started);
	free(h->ended);
	free(h->status);
	free(h->machine_json);
	free(h->sha256);
	memset(h, 0, sizeof(*h));
}

static int valid_run_status(const char *status)
{
	for (size_t i = 0; i < ARRAY_SIZE(run_statuses); i++)
		if (!strcmp(status, run_statuses[i]))
			return 1;
	return 0;
}

/* Experiment row for exp (inserted unless its sha256 is known): its id. */
static int put_experiment(struct store *s, const struct experiment *exp,
			  int64_t *id)
{
	sqlite3_stmt *st = NULL;
	const char *text = exp->text ? exp->text : "";
	size_t len = exp->text ? exp->text_len : 0;
	char sha[65];
	int ret = -1;

	sha256_hex(text, len, sha);
	if (prepare(s, "INSERT OR IGNORE INTO experiments (name, path, text, sha256)"
		    " VALUES (?1, ?2, ?3, ?4)", &st, write_error) < 0)
		goto out;
	if (step_bound(s, st, sqlite3_bind_text(st, 1, exp->name, -1, SQLITE_STATIC) |
			   sqlite3_bind_text(st, 2, exp->path, -1, SQLITE_STATIC) |
			   sqlite3_bind_text64(st, 3, text, len, SQLITE_STATIC, SQLITE_UTF8) |
			   sqlite3_bind_text(st, 4, sha, -1, SQLITE_STATIC)) < 0)
		goto out;
	sqlite3_finalize(st);
	if (prepare(s, "SELECT id FROM experiments WHERE sha256 = ?1", &st,
		    write_error) < 0)
		goto out;
	if (sqlite3_bind_text(st, 1, sha, -1, SQLITE_STATIC) ||
	    sqlite3_step(st) != SQLITE_ROW) {
		write_error(s);
		goto out;
	}
	*id = sqlite3_column_int64(st, 0);
	ret = 0;
out:
	sqlite3_finalize(st);
	return ret;
}

static int put_run(struct store *s, const struct experiment *exp,
		   int64_t experiment_id, uint64_t seed, const char *argv,
		   const struct machine_info *m, int64_t *run_id)
{
	static const char sql[] =
		"INSERT INTO runs (experiment_id, name, baseline, seed, \"order\","
		" argv, started, status, perturb_version, machine_json,"
		" kernel_release, kernel_cmdline, cpu_model, cores, governor, smt,"
		" aslr, loadavg)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'running', ?8, ?9, ?10, ?11,"
		" ?12, ?13, ?14, ?15, ?16, ?17)";
	sqlite3_stmt *st = NULL;
	char seedbuf[24], started[32];
	char *json = m ? machine_json(m) : NULL;
	int rc, ret = -1;

	snprintf(seedbuf, sizeof(seedbuf), "%" PRIu64, seed);
	now_iso8601(started, sizeof(started));
	if (prepare(s, sql, &st, write_error) < 0)
		goto out;
	rc = sqlite3_bind_int64(st, 1, experiment_id) |
	     sqlite3_bind_text(st, 2, exp->name, -1, SQLITE_STATIC) |
	     sqlite3_bind_text(st, 3, exp->baseline, -1, SQLITE_STATIC) |
	     sqlite3_bind_text(st, 4, seedbuf, -1, SQLITE_STATIC) |
	     sqlite3_bind_text(st, 5, order_name(exp->order), -1, SQLITE_STATIC) |
	     sqlite3_bind_text(st, 6, argv, -1, SQLITE_STATIC) |
	     sqlite3_bind_text(st, 7, started, -1, SQLITE_STATIC) |
	     sqlite3_bind_text(st, 9, json, -1, SQLITE_STATIC);
	if (m)
		rc |= sqlite3_bind_text(st, 8, m->perturb_version, -1, SQLITE_STATIC) |
		      sqlite3_bind_text(st, 10, m->kernel_release, -1, SQLITE_STATIC) |
		      sqlite3_bind_text(st, 11, m->kernel_cmdline, -1, SQLITE_STATIC) |
		      sqlite3_bind_text(st, 12, m->cpu_model, -1, SQLITE_STATIC) |
		      sqlite3_bind_int(st, 13, m->cores) |
		      sqlite3_bind_text(st, 14, m->governor, -1, SQLITE_STATIC) |
		      sqlite3_bind_text(st, 15, m->smt, -1, SQLITE_STATIC) |
		      sqlite3_bind_text(st, 16, m->aslr, -1, SQLITE_STATIC) |
		      sqlite3_bind_text(st, 17, m->loadavg, -1, SQLITE_STATIC);
	else
		rc |= sqlite3_bind_text(st, 8, PERTURB_VERSION, -1, SQLITE_STATIC);
	if (step_bound(s, st, rc) < 0)
		goto out;
	*run_id = sqlite3_last_insert_rowid(s->db);
	ret = 0;
out:
	sqlite3_finalize(st);
	free(json);
	return ret;
}

/* The parameters of the instances of matrices (table matrix). */
static int put_matrix(struct store *s, const char *kind, const char *name, const char *base,
		      const struct matrix_value *mv, size_t n, int64_t run_id)
{
	sqlite3_stmt *st = NULL;
	int ret = -1;

	if (!n)
		return 0;
	if (prepare(s, "INSERT INTO matrix (run_id, kind, name, base, param, value, x, is_list)"
		    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)", &st, write_error) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		sqlite3_reset(st);
		if (step_bound(s, st, sqlite3_bind_int64(st, 1, run_id) |
				      sqlite3_bind_text(st, 2, kind, -1, SQLITE_STATIC) |
				      sqlite3_bind_text(st, 3, name, -1, SQLITE_STATIC) |
				      sqlite3_bind_text(st, 4, base, -1, SQLITE_STATIC) |
				      sqlite3_bind_text(st, 5, mv[i].param, -1, SQLITE_STATIC) |
				      sqlite3_bind_text(st, 6, mv[i].value, -1, SQLITE_STATIC) |
				      (isfinite(mv[i].x) ? sqlite3_bind_double(st, 7, mv[i].x)
							 : sqlite3_bind_null(st, 7)) |
				      sqlite3_bind_int(st, 8, mv[i].is_list)) < 0)
			goto out;
	}
	ret = 0;
out:
	sqlite3_finalize(st);
	return ret;
}

static int put_names(struct store *s, const struct experiment *exp, int64_t run_id)
{
	sqlite3_stmt *v = NULL, *w = NULL;
	int ret = -1;

	if (prepare(s, "INSERT INTO variants (run_id, idx, name, description, timebase)"
		    " VALUES (?1, ?2, ?3, ?4, ?5)", &v, write_error) < 0 ||
	    prepare(s, "INSERT INTO workloads (run_id, idx, name, kind, description)"
		    " VALUES (?1, ?2, ?3, ?4, ?5)", &w, write_error) < 0)
		goto out;
	for (size_t i = 0; i < exp->n_variants; i++) {
		const struct variant *x = &exp->variants[i];
		if (step_bound(s, v, sqlite3_bind_int64(v, 1, run_id) |
				   sqlite3_bind_int64(v, 2, (int64_t)i) |
				   sqlite3_bind_text(v, 3, x->name, -1, SQLITE_STATIC) |
				   sqlite3_bind_text(v, 4, x->description, -1, SQLITE_STATIC) |
				   sqlite3_bind_text(v, 5, variant_timebase(x), -1,
						     SQLITE_STATIC)) < 0 ||
		    put_matrix(s, "variant", x->name, x->base, x->matrix, x->n_matrix, run_id) < 0)
			goto out;
	}
	for (size_t i = 0; i < exp->n_workloads; i++) {
		const struct workload *x = &exp->workloads[i];
		const char *kind = x->kind == WORKLOAD_MICRO ? "micro" : "real";
		if (step_bound(s, w, sqlite3_bind_int64(w, 1, run_id) |
				   sqlite3_bind_int64(w, 2, (int64_t)i) |
				   sqlite3_bind_text(w, 3, x->name, -1, SQLITE_STATIC) |
				   sqlite3_bind_text(w, 4, kind, -1, SQLITE_STATIC) |
				   sqlite3_bind_text(w, 5, x->description, -1, SQLITE_STATIC)) < 0 ||
		    put_matrix(s, "workload", x->name, x->base, x->matrix, x->n_matrix, run_id) < 0)
			goto out;
	}
	ret = 0;
out:
	sqlite3_finalize(v);
	sqlite3_finalize(w);
	return ret;
}

/* The calibration workloads and the traced variants (migrate_calibration). */
static int put_tracing(struct store *s, const struct experiment *exp, int64_t run_id)
{
	sqlite3_stmt *c = NULL, *t = NULL;
	char attach[512];
	int ret = -1;

	if (prepare(s, "INSERT INTO calibration (run_id, workload, hits, hits_metric, metric,"
		    " ops_metric) VALUES (?1, ?2, ?3, ?4, ?5, ?6)", &c, write_error) < 0 ||
	    prepare(s, "INSERT INTO tracer_variants (run_id, variant, tracer, attach)"
		    " VALUES (?1, ?2, ?3, ?4)", &t, write_error) < 0)
		goto out;
	for (size_t i = 0; i < exp->n_workloads; i++) {
		const struct workload *x = &exp->workloads[i];
		if (!x->calib_hits && !x->calib_hits_metric)
			continue;
		if (step_bound(s, c, sqlite3_bind_int64(c, 1, run_id) |
				   sqlite3_bind_text(c, 2, x->name, -1, SQLITE_STATIC) |
				   (x->calib_hits ? sqlite3_bind_double(c, 3, x->calib_hits) :
				    sqlite3_bind_null(c, 3)) |
				   bind_opt_text(c, 4, x->calib_hits_metric) |
				   bind_opt_text(c, 5, x->calib_metric) |
				   bind_opt_text(c, 6, x->calib_ops_metric)) < 0)
			goto out;
	}
	for (size_t i = 0; i < exp->n_variants; i++) {
		const struct variant *x = &exp->variants[i];
		const struct tracer_kind *k = tracer_of_variant(x, attach, sizeof(attach));
		if (k && step_bound(s, t, sqlite3_bind_int64(t, 1, run_id) |
					sqlite3_bind_text(t, 2, x->name, -1, SQLITE_STATIC) |
					sqlite3_bind_text(t, 3, k->name, -1, SQLITE_STATIC) |
					sqlite3_bind_text(t, 4, attach, -1, SQLITE_STATIC)) < 0)
			goto out;
	}
	ret = 0;
out:
	sqlite3_finalize(c);
	sqlite3_finalize(t);
	return ret;
}

static int put_plan(struct store *s, const struct experiment *exp,
		    const struct plan *plan, size_t from, int64_t run_id)
{
	sqlite3_stmt *st = NULL;
	int ret = -1;

	if (prepare(s, "INSERT INTO plan (run_id, seq, variant, workload,"
		    " variant_idx, workload_idx, repetition, warmup, round, block)"
		    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)", &st,
		    write_error) < 0)
		goto out;
	for (size_t i = from; i < plan->n; i++) {
		const struct plan_entry *e = &plan->e[i];
		if (e->seq != (int)i || e->variant < 0 ||
		    (size_t)e->variant >= exp->n_variants || e->workload < 0 ||
		    (size_t)e->workload >= exp->n_workloads) {
			error("cannot write results database '%s': plan entry %zu is inconsistent (seq %d, variant %d, workload %d)",
			      s->path, i, e->seq, e->variant, e->workload);
			goto out;
		}
		if (step_bound(s, st, sqlite3_bind_int64(st, 1, run_id) |
				   sqlite3_bind_int(st, 2, e->seq) |
				   sqlite3_bind_text(st, 3, exp->variants[e->variant].name, -1, SQLITE_STATIC) |
				   sqlite3_bind_text(st, 4, exp->workloads[e->workload].name, -1, SQLITE_STATIC) |
				   sqlite3_bind_int(st, 5, e->variant) |
				   sqlite3_bind_int(st, 6, e->workload) |
				   sqlite3_bind_int(st, 7, e->repetition) |
				   sqlite3_bind_int(st, 8, !!e->warmup) |
				   sqlite3_bind_int(st, 9, e->round) |
				   sqlite3_bind_int(st, 10, e->block)) < 0)
			goto out;
	}
	ret = 0;
out:
	sqlite3_finalize(st);
	return ret;
}

int store_begin_run(struct store *s, const struct experiment *exp,
		    const struct plan *plan, uint64_t seed, const char *argv,
		    const struct machine_info *m, int64_t *run_id)
{
	int64_t experiment_id, id;

	if (begin(s) < 0)
		return -1;
	if (put_experiment(s, exp, &experiment_id) < 0 ||
	    put_run(s, exp, experiment_id, seed, argv, m, &id) < 0 ||
	    put_names(s, exp, id) < 0 ||
	    put_tracing(s, exp, id) < 0 ||
	    put_plan(s, exp, plan, 0, id) < 0 ||
	    commit(s) < 0) {
		rollback(s);
		return -1;
	}
	*run_id = id;
	return 0;
}

int store_append_plan(struct store *s, const struct experiment *exp,
		      const struct plan *plan, size_t from, int64_t run_id)
{
	if (begin(s) < 0)
		return -1;
	if (put_plan(s, exp, plan, from, run_id) < 0 || commit(s) < 0) {
		rollback(s);
		return -1;
	}
	return 0;
}

static int reserved_metric(const char *name)
{
	return !strcmp(name, "wall") || !strcmp(name, "user") ||
	       !strcmp(name, "sys") || !strcmp(name, "maxrss");
}

int store_put_result(struct store *s, int64_t run_id, int seq,
		     const struct run_result *r)
{
	return store_put_result_cost(s, run_id, seq, r, NAN);
}

int store_put_result_cost(struct store *s, int64_t run_id, int seq,
			  const struct run_result *r, double cost_s)
{
	static const char result_sql[] =
		"INSERT INTO results (run_id, seq, status, exit_code, signal,"
		" reason, started, wall_s, user_s, sys_s, maxrss_kb, output_tail,"
		" output_dropped, cpu, start_mono, cost_s)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)";
	sqlite3_stmt *res = NULL, *val = NULL;
	int rc, ret = -1;

	if (r->status == RUN_INTERRUPTED)
		return error("cannot write results database '%s': an interrupted run is never stored",
			     s->path);
	for (size_t i = 0; i < r->n_values; i++)
		if (reserved_metric(r->values[i].name))
			return error("cannot write results database '%s': metric name '%s' is reserved",
				     s->path, r->values[i].name);
	if (begin(s) < 0)
		return -1;
	if (cached(s, ST_RESULT, result_sql, &res) < 0 ||
	    cached(s, ST_VALUE, "INSERT INTO metric_values (run_id, seq, metric, value, unit,"
		   " scaled, time_enabled_ns, time_running_ns)"
		   " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)", &val) < 0)
		goto out;
	rc = sqlite3_bind_int64(res, 1, run_id) |
	     sqlite3_bind_int(res, 2, seq) |
	     sqlite3_bind_text(res, 3, run_status_name(r->status), -1, SQLITE_STATIC) |
	     bind_opt_text(res, 6, r->reason) |
	     bind_opt_text(res, 7, r->started) |
	     sqlite3_bind_double(res, 8, r->wall_s) |
	     sqlite3_bind_double(res, 9, r->user_s) |
	     sqlite3_bind_double(res, 10, r->sys_s) |
	     sqlite3_bind_int64(res, 11, r->maxrss_kb) |
	     sqlite3_bind_int64(res, 13, (sqlite3_int64)r->output_dropped);
	if (r->status == RUN_OK || r->status == RUN_FAILED)
		rc |= sqlite3_bind_int(res, 4, r->exit_code);
	if (r->status == RUN_CRASHED)
		rc |= sqlite3_bind_int(res, 5, r->signal);
	if (r->has_cpu)
		rc |= sqlite3_bind_int(res, 14, r->cpu);
	if (r->start_mono > 0)
		rc |= sqlite3_bind_double(res, 15, r->start_mono);
	if (isfinite(cost_s) && cost_s >= 0)
		rc |= sqlite3_bind_double(res, 16, cost_s);
	if (r->status != RUN_OK)
		rc |= sqlite3_bind_text(res, 12, r->out_tail ? r->out_tail : "",
					-1, SQLITE_STATIC);
	if (step_bound(s, res, rc) < 0)
		goto out;
	for (size_t i = 0; i < r->n_values; i++) {
		const struct metric_value *v = &r->values[i];
		if (step_bound(s, val, sqlite3_bind_int64(val, 1, run_id) |
				   sqlite3_bind_int(val, 2, seq) |
				   sqlite3_bind_text(val, 3, v->name, -1, SQLITE_STATIC) |
				   sqlite3_bind_double(val, 4, v->value) |
				   sqlite3_bind_text(val, 5, v->unit ? v->unit : "", -1, SQLITE_STATIC) |
				   sqlite3_bind_int(val, 6, !!v->scaled) |
				   (v->time_enabled_ns ?
				    sqlite3_bind_int64(val, 7, (sqlite3_int64)v->time_enabled_ns) |
				    sqlite3_bind_int64(val, 8, (sqlite3_int64)v->time_running_ns) : 0)) < 0)
			goto out;
	}
	if (commit(s) < 0)
		goto out;
	ret = 0;
out:
	if (res)
		sqlite3_reset(res);
	if (val)
		sqlite3_reset(val);
	if (ret < 0)
		rollback(s);
	return ret;
}

int store_put_unavailable(struct store *s, int64_t run_id, const char *metric,
			  const char *reason)
{
	sqlite3_stmt *st = NULL;
	int ret;

	if (prepare(s, "INSERT OR IGNORE INTO unavailable (run_id, metric, reason)"
		    " VALUES (?1, ?2, ?3)", &st, write_error) < 0)
		return -1;
	ret = step_bound(s, st, sqlite3_bind_int64(st, 1, run_id) |
			 sqlite3_bind_text(st, 2, metric, -1, SQLITE_STATIC) |
			 sqlite3_bind_text(st, 3, reason, -1, SQLITE_STATIC));
	sqlite3_finalize(st);
	return ret;
}

int store_put_block_time(struct store *s, int64_t run_id, int first_seq, int leave,
			 double secs)
{
	static const char *const sql[] = {
		"INSERT OR REPLACE INTO block_entries (run_id, first_seq, enter_s)"
		" VALUES (?1, ?2, ?3)",
		"UPDATE block_entries SET leave_s = ?3 WHERE run_id = ?1 AND first_seq = ?2",
	};
	sqlite3_stmt *st = NULL;
	int ret;

	if (prepare(s, sql[!!leave], &st, write_error) < 0)
		return -1;
	ret = step_bound(s, st, sqlite3_bind_int64(st, 1, run_id) |
			 sqlite3_bind_int(st, 2, first_seq) |
			 sqlite3_bind_double(st, 3, secs));
	sqlite3_finalize(st);
	return ret;
}

/* One row of store_block_costs()'s query: kind 0 the block entries of a
 * variant, 1 its warm-ups' costs, 2 its measured runs' costs of a workload. */
struct cost_row {
	int kind, variant, workload;
	size_t n;
	double sum;
};

static void fill_cost(sqlite3_stmt *st, void *row)
{
	struct cost_row *x = row;

	x->kind = sqlite3_column_int(st, 0);
	x->variant = sqlite3_column_int(st, 1);
	x->workload = sqlite3_column_int(st, 2);
	x->n = (size_t)sqlite3_column_int64(st, 3);
	x->sum = sqlite3_column_double(st, 4);
}

static const struct row_kind cost_rows = { sizeof(struct cost_row), fill_cost, NULL, 0 };

int store_block_costs(struct store *s, int64_t run_id, size_t n_variants, size_t n_workloads,
		      struct store_block_cost *vc, struct store_run_cost *rc)
{
	void *rows;
	size_t n;

	memset(vc, 0, n_variants * sizeof(*vc));
	memset(rc, 0, n_workloads * n_variants * sizeof(*rc));
	if (rows_of_run(s, "SELECT 0, p.variant_idx, 0, count(*), total(e.enter_s) + total(e.leave_s)"
			" FROM block_entries e JOIN plan p ON p.run_id = e.run_id"
			" AND p.seq = e.first_seq WHERE e.run_id = ?1 GROUP BY p.variant_idx"
			" UNION ALL"
			" SELECT 1 + (p.warmup = 0), p.variant_idx, p.workload_idx, count(*),"
			" total(r.cost_s) FROM results r JOIN plan p ON p.run_id = r.run_id"
			" AND p.seq = r.seq WHERE r.run_id = ?1 AND r.cost_s IS NOT NULL"
			" GROUP BY p.variant_idx, p.workload_idx, p.warmup",
			run_id, &cost_rows, &rows, &n) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		const struct cost_row *x = (const struct cost_row *)rows + i;
		if (x->variant < 0 || (size_t)x->variant >= n_variants)
			continue;
		if (x->kind == 0) {
			vc[x->variant].entries = x->n;
			vc[x->variant].switch_s = x->sum;
		} else if (x->kind == 1) {
			vc[x->variant].warmup_s += x->sum;
		} else if (x->workload >= 0 && (size_t)x->workload < n_workloads) {
			rc[(size_t)x->workload * n_variants + (size_t)x->variant] =
				(struct store_run_cost){ x->n, x->sum };
		}
	}
	free(rows);
	return 0;
}

int store_each_unavailable(struct store *s, int64_t run_id,
			   store_unavailable_fn fn, void *ctx)
{
	sqlite3_stmt *st = NULL;
	int rc, ret = 0;

	if (prepare_run(s, "SELECT metric, reason FROM unavailable WHERE run_id = ?1"
			" ORDER BY metric", run_id, &st) < 0)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		ret = fn((const char *)sqlite3_column_text(st, 0),
			 (const char *)sqlite3_column_text(st, 1), ctx);
		if (ret)
			goto out;
	}
	if (rc != SQLITE_DONE)
		ret = read_error(s);
out:
	sqlite3_finalize(st);
	return ret;
}

static int update_run(struct store *s, int64_t run_id, const char *status,
		      const char *ended)
{
	sqlite3_stmt *st = NULL;
	int ret = -1;

	if (!valid_run_status(status))
		return error("cannot write results database '%s': invalid run status '%s'",
			     s->path, status);
	if (prepare(s, "UPDATE runs SET status = ?2, ended = coalesce(?3, ended)"
		    " WHERE id = ?1", &st, write_error) < 0)
		return -1;
	if (step_bound(s, st, sqlite3_bind_int64(st, 1, run_id) |
			   sqlite3_bind_text(st, 2, status, -1, SQLITE_STATIC) |
			   sqlite3_bind_text(st, 3, ended, -1, SQLITE_STATIC)) < 0)
		goto out;
	if (sqlite3_changes(s->db) != 1) {
		error("cannot write results database '%s': no run %" PRId64,
		      s->path, run_id);
		goto out;
	}
	ret = 0;
out:
	sqlite3_finalize(st);
	return ret;
}

int store_end_run(struct store *s, int64_t run_id, const char *status)
{
	char ended[32];

	now_iso8601(ended, sizeof(ended));
	return update_run(s, run_id, status, ended);
}

int store_set_status(struct store *s, int64_t run_id, const char *status)
{
	return update_run(s, run_id, status, NULL);
}

/* Run a query that yields at most one integer; *out = 0 when no row/NULL. */
static int query_id(struct store *s, const char *sql, const char *arg,
		    int64_t *out)
{
	sqlite3_stmt *st = NULL;
	int rc, ret = 0;

	*out = 0;
	if (prepare(s, sql, &st, read_error) < 0)
		return -1;
	if (arg && sqlite3_bind_text(st, 1, arg, -1, SQLITE_STATIC)) {
		ret = read_error(s);
		goto out;
	}
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*out = sqlite3_column_int64(st, 0);
	else if (rc != SQLITE_DONE)
		ret = read_error(s);
out:
	sqlite3_finalize(st);
	return ret;
}

int store_find_resumable(struct store *s, const char *sha256, int64_t *run_id)
{
	return query_id(s, "SELECT r.id FROM runs r"
			" JOIN experiments e ON e.id = r.experiment_id"
			" WHERE e.sha256 = ?1 AND r.status <> 'completed'"
			" ORDER BY r.id DESC LIMIT 1", sha256, run_id);
}

int store_latest_run(struct store *s, int64_t *run_id)
{
	return query_id(s, "SELECT max(id) FROM runs", NULL, run_id);
}

/* "1-3, 7, 9-12" */
static void add_id_range(struct strbuf *sb, int64_t first, int64_t last)
{
	strbuf_addf(sb, "%s%" PRId64, sb->len ? ", " : "", first);
	if (last > first)
		strbuf_addf(sb, "-%" PRId64, last);
}

/* The ids of the runs stored, as ranges: "1-3, 7, 9-12". */
static int add_run_ids(struct store *s, struct strbuf *sb)
{
	sqlite3_stmt *st = NULL;
	int64_t first = 0, last = 0, id;
	int rc, ret = 0, have = 0;

	if (prepare(s, "SELECT id FROM runs ORDER BY id", &st, read_error) < 0)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		id = sqlite3_column_int64(st, 0);
		if (have && id == last + 1) {
			last = id;
			continue;
		}
		if (have)
			add_id_range(sb, first, last);
		first = last = id;
		have = 1;
	}
	if (have)
		add_id_range(sb, first, last);
	if (rc != SQLITE_DONE)
		ret = read_error(s);
	sqlite3_finalize(st);
	return ret;
}

/* "no run SPEC in results database 'PATH'", and what it holds. */
static int no_run_named(struct store *s, const char *spec)
{
	struct strbuf ids = STRBUF_INIT, cmd = STRBUF_INIT;

	if (add_run_ids(s, &ids) < 0) {
		strbuf_release(&ids);
		return -1;
	}
	if (!ids.len)
		error("no run %s in results database '%s': it holds no run yet (run 'perturb run' "
		      "first)", spec, s->path);
	else {
		strbuf_addstr(&cmd, "perturb runs --db ");
		strbuf_add_shell_word(&cmd, s->path);
		error("no run %s in results database '%s': it holds run%s %s ('%s' lists them; "
		      "--run latest or -1 is the latest, -2 the one before)", spec, s->path,
		      strchr(ids.buf, ',') || strchr(ids.buf, '-') ? "s" : "", ids.buf, cmd.buf);
	}
	strbuf_release(&cmd);
	strbuf_release(&ids);
	return -1;
}

static int no_run(struct store *s, int64_t run_id)
{
	char spec[32];

	snprintf(spec, sizeof(spec), "%" PRId64, run_id);
	return no_run_named(s, spec);
}

int store_resolve_run(struct store *s, const char *spec, int64_t *run_id, int *usage)
{
	sqlite3_stmt *st = NULL;
	long n;
	int rc, ret = -1;

	if (usage)
		*usage = 0;
	*run_id = 0;
	if (!spec || !*spec || !strcmp(spec, "latest")) {
		n = 1;
	} else if (spec[0] == '-' && !parse_long(spec + 1, 1, LONG_MAX, &n)) {
		;
	} else if (!parse_long(spec, 1, LONG_MAX, &n)) {
		if (prepare_run(s, "SELECT id FROM runs WHERE id = ?1", n, &st) < 0)
			return -1;
		goto step;
	} else {
		if (usage)
			*usage = 1;
		return error("--run takes a run id, latest, or -N (the Nth latest), got '%s'", spec);
	}
	/* the Nth latest */
	if (prepare_run(s, "SELECT id FROM runs ORDER BY id DESC LIMIT 1 OFFSET ?1 - 1", n,
			&st) < 0)
		return -1;
step:
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*run_id = sqlite3_column_int64(st, 0);
		ret = 0;
	} else if (rc == SQLITE_DONE) {
		if (usage)
			*usage = 1;
		no_run_named(s, spec && *spec ? spec : "latest");
	} else {
		read_error(s);
	}
	sqlite3_finalize(st);
	return ret;
}

int store_each_failure(struct store *s, int64_t run_id, store_failure_fn fn, void *ctx)
{
	sqlite3_stmt *st = NULL;
	int rc, ret = 0;

	if (prepare_run(s, "SELECT r.seq, p.repetition, p.warmup, p.variant, p.workload,"
			" r.status, r.reason, r.output_tail FROM results r"
			" JOIN plan p ON p.run_id = r.run_id AND p.seq = r.seq"
			" WHERE r.run_id = ?1 AND r.status <> 'ok' ORDER BY r.seq", run_id, &st) < 0)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *tail = (const char *)sqlite3_column_text(st, 7);
		struct stored_failure f = {
			.seq = sqlite3_column_int(st, 0),
			.repetition = sqlite3_column_int(st, 1),
			.warmup = sqlite3_column_int(st, 2),
			.variant = (const char *)sqlite3_column_text(st, 3),
			.workload = (const char *)sqlite3_column_text(st, 4),
			.status = (const char *)sqlite3_column_text(st, 5),
			.reason = (const char *)sqlite3_column_text(st, 6),
			.output_tail = tail ? tail : "",
		};
		if ((ret = fn(&f, ctx)))
			break;
	}
	if (!ret && rc != SQLITE_DONE)
		ret = read_error(s);
	sqlite3_finalize(st);
	return ret;
}

static void fill_summary(sqlite3_stmt *st, void *row)
{
	struct run_summary *r = row;

	r->id = sqlite3_column_int64(st, 0);
	r->name = column_dup(st, 1);
	r->started = column_dup(st, 2);
	r->ended = column_dup(st, 3);
	r->status = column_dup(st, 4);
	r->hostname = column_dup(st, 5);
	r->cpu_model = column_dup(st, 6);
	r->cores = sqlite3_column_int64(st, 7);
	r->kernel_release = column_dup(st, 8);
	r->total = sqlite3_column_int64(st, 9);
	r->done = sqlite3_column_int64(st, 10);
	r->failed = sqlite3_column_int64(st, 11);
}

static const size_t summary_strs[] = {
	offsetof(struct run_summary, name), offsetof(struct run_summary, started),
	offsetof(struct run_summary, ended), offsetof(struct run_summary, status),
	offsetof(struct run_summary, hostname), offsetof(struct run_summary, cpu_model),
	offsetof(struct run_summary, kernel_release),
};
static const struct row_kind summary_rows = {
	sizeof(struct run_summary), fill_summary, summary_strs, ARRAY_SIZE(summary_strs),
};

int store_list_runs(struct store *s, struct run_summary **runs, size_t *n)
{
	sqlite3_stmt *st = NULL;
	void *rows;
	int rc;

	*runs = NULL;
	*n = 0;
	if (prepare(s, "SELECT r.id, r.name, r.started, r.ended, r.status,"
		    " json_extract(r.machine_json, '$.hostname'), r.cpu_model, r.cores,"
		    " r.kernel_release,"
		    " (SELECT count(*) FROM plan p WHERE p.run_id = r.id),"
		    " (SELECT count(*) FROM results x WHERE x.run_id = r.id),"
		    " (SELECT count(*) FROM results x WHERE x.run_id = r.id AND x.status <> 'ok')"
		    " FROM runs r ORDER BY r.id", &st, read_error) < 0)
		return -1;
	rc = rows_collect(s, st, &summary_rows, &rows, n);
	*runs = rows;
	return rc;
}

void run_summaries_release(struct run_summary *runs, size_t n)
{
	rows_free(&summary_rows, runs, n);
}

/* Step st (from prepare_run()) to the run's row: 0, or -1 (printed) when
 * there is no such run or the query fails. */
static int step_run_row(struct store *s, sqlite3_stmt *st, int64_t run_id)
{
	int rc = sqlite3_step(st);

	if (rc == SQLITE_ROW)
		return 0;
	return rc == SQLITE_DONE ? no_run(s, run_id) : read_error(s);
}

int store_load_plan(struct store *s, int64_t run_id, struct plan *plan,
		    unsigned char **done)
{
	sqlite3_stmt *st = NULL;
	int rc, ret = -1;

	memset(plan, 0, sizeof(*plan));
	*done = NULL;
	if (prepare_run(s, "SELECT id FROM runs WHERE id = ?1", run_id, &st) < 0)
		return -1;
	if (step_run_row(s, st, run_id) < 0)
		goto out;
	sqlite3_finalize(st);

	if (prepare_run(s, "SELECT seq, variant_idx, workload_idx, repetition, warmup,"
			" round, block FROM plan WHERE run_id = ?1 ORDER BY seq", run_id, &st) < 0)
		goto out;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct plan_entry *e;
		ALLOC_GROW(plan->e, plan->n + 1, plan->alloc);
		e = &plan->e[plan->n];
		e->seq = sqlite3_column_int(st, 0);
		e->variant = sqlite3_column_int(st, 1);
		e->workload = sqlite3_column_int(st, 2);
		e->repetition = sqlite3_column_int(st, 3);
		e->warmup = sqlite3_column_int(st, 4);
		e->round = sqlite3_column_int(st, 5);
		e->block = sqlite3_column_int(st, 6);
		if (e->seq != (int)plan->n) {
			error("results database '%s' is damaged: run %" PRId64 " has no plan entry %zu",
			      s->path, run_id, plan->n);
			goto out;
		}
		plan->n++;
	}
	if (rc != SQLITE_DONE) {
		read_error(s);
		goto out;
	}
	sqlite3_finalize(st);

	*done = xcalloc(plan->n ? plan->n : 1, 1);
	if (prepare_run(s, "SELECT seq FROM results WHERE run_id = ?1", run_id, &st) < 0)
		goto out;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int seq = sqlite3_column_int(st, 0);
		if (seq >= 0 && (size_t)seq < plan->n)
			(*done)[seq] = 1;
	}
	if (rc != SQLITE_DONE) {
		read_error(s);
		goto out;
	}
	ret = 0;
out:
	sqlite3_finalize(st);
	if (ret < 0) {
		free(plan->e);
		memset(plan, 0, sizeof(*plan));
		free(*done);
		*done = NULL;
	}
	return ret;
}

int store_run_header(struct store *s, int64_t run_id, struct run_header *h)
{
	sqlite3_stmt *st = NULL;
	const char *seed;
	char *end;
	int ret = -1;

	memset(h, 0, sizeof(*h));
	if (prepare_run(s, "SELECT r.id, r.name, e.path, r.baseline, r.seed,"
			" r.\"order\", r.started, r.ended, r.status, r.machine_json,"
			" e.sha256 FROM runs r JOIN experiments e ON e.id = r.experiment_id"
			" WHERE r.id = ?1", run_id, &st) < 0)
		return -1;
	if (step_run_row(s, st, run_id) < 0)
		goto out;
	seed = (const char *)sqlite3_column_text(st, 4);
	errno = 0;
	h->seed = seed ? strtoull(seed, &end, 10) : 0;
	if (!seed || !*seed || *end || errno || *seed == '-') {
		error("results database '%s' is damaged: run %" PRId64 " has seed '%s'",
		      s->path, run_id, seed ? seed : "");
		goto out;
	}
	h->id = sqlite3_column_int64(st, 0);
	h->experiment = column_dup(st, 1);
	h->path = column_dup(st, 2);
	h->baseline = column_dup(st, 3);
	h->order = column_dup(st, 5);
	h->started = column_dup(st, 6);
	h->ended = column_dup(st, 7);
	h->status = column_dup(st, 8);
	h->machine_json = column_dup(st, 9);
	h->sha256 = column_dup(st, 10);
	ret = 0;
out:
	sqlite3_finalize(st);
	if (ret < 0)
		run_header_release(h);
	return ret;
}

static void fill_name(sqlite3_stmt *st, void *row)
{
	*(char **)row = column_dup(st, 0);
}

static const size_t name_strs[] = { 0 };
static const struct row_kind name_rows = { sizeof(char *), fill_name, name_strs, 1 };

static void free_names(char **v, size_t n)
{
	rows_free(&name_rows, v, n);
}

static int names(struct store *s, const char *sql, int64_t run_id,
		 char ***out, size_t *n)
{
	void *rows;
	int rc = rows_of_run(s, sql, run_id, &name_rows, &rows, n);

	*out = rows;
	return rc;
}

int store_variant_names(struct store *s, int64_t run_id, char ***names_out, size_t *n)
{
	return names(s, "SELECT name FROM variants WHERE run_id = ?1 ORDER BY idx",
		     run_id, names_out, n);
}

const char *variant_timebase(const struct variant *v)
{
	return backend_virtual_time(v) ? "virtual" : "real";
}

int store_variant_timebases(struct store *s, int64_t run_id, char ***names_out, size_t *n)
{
	return names(s, "SELECT timebase FROM variants WHERE run_id = ?1 ORDER BY idx",
		     run_id, names_out, n);
}

int store_calibration(struct store *s, int64_t run_id, int col, char ***out, size_t *n)
{
	static const char *const sql[] = {
		"SELECT CAST(c.hits AS TEXT) FROM workloads w LEFT JOIN calibration c"
		" ON c.run_id = w.run_id AND c.workload = w.name WHERE w.run_id = ?1 ORDER BY w.idx",
		"SELECT c.hits_metric FROM workloads w LEFT JOIN calibration c"
		" ON c.run_id = w.run_id AND c.workload = w.name WHERE w.run_id = ?1 ORDER BY w.idx",
		"SELECT c.metric FROM workloads w LEFT JOIN calibration c"
		" ON c.run_id = w.run_id AND c.workload = w.name WHERE w.run_id = ?1 ORDER BY w.idx",
		"SELECT c.ops_metric FROM workloads w LEFT JOIN calibration c"
		" ON c.run_id = w.run_id AND c.workload = w.name WHERE w.run_id = ?1 ORDER BY w.idx",
	};
	return names(s, sql[col], run_id, out, n);
}

int store_variant_tracers(struct store *s, int64_t run_id, int col, char ***out, size_t *n)
{
	static const char *const sql[] = {
		"SELECT t.tracer FROM variants v LEFT JOIN tracer_variants t"
		" ON t.run_id = v.run_id AND t.variant = v.name WHERE v.run_id = ?1 ORDER BY v.idx",
		"SELECT t.attach FROM variants v LEFT JOIN tracer_variants t"
		" ON t.run_id = v.run_id AND t.variant = v.name WHERE v.run_id = ?1 ORDER BY v.idx",
	};
	return names(s, sql[col], run_id, out, n);
}

int store_workload_names(struct store *s, int64_t run_id, char ***names_out, size_t *n)
{
	return names(s, "SELECT name FROM workloads WHERE run_id = ?1 ORDER BY idx",
		     run_id, names_out, n);
}

static void fill_matrix(sqlite3_stmt *st, void *row)
{
	struct store_matrix_row *r = row;

	r->is_variant = !strcmp((const char *)sqlite3_column_text(st, 0), "variant");
	r->name = column_dup(st, 1);
	r->base = column_dup(st, 2);
	r->param = column_dup(st, 3);
	r->value = column_dup(st, 4);
	r->x = sqlite3_column_type(st, 5) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 5);
	r->is_list = sqlite3_column_int(st, 6);
}

static const size_t matrix_strs[] = {
	offsetof(struct store_matrix_row, name), offsetof(struct store_matrix_row, base),
	offsetof(struct store_matrix_row, param), offsetof(struct store_matrix_row, value),
};
static const struct row_kind matrix_rows = {
	sizeof(struct store_matrix_row), fill_matrix, matrix_strs, ARRAY_SIZE(matrix_strs),
};

void store_matrix_free(struct store_matrix_row *rows, size_t n)
{
	rows_free(&matrix_rows, rows, n);
}

int store_matrix(struct store *s, int64_t run_id, struct store_matrix_row **out, size_t *n)
{
	void *rows;
	int rc;

	/* in stored order: the instances as the experiment listed them */
	rc = rows_of_run(s, "SELECT m.kind, m.name, m.base, m.param, m.value, m.x, m.is_list"
			 " FROM matrix m"
			 " LEFT JOIN variants v ON m.kind = 'variant' AND v.run_id = m.run_id AND v.name = m.name"
			 " LEFT JOIN workloads w ON m.kind = 'workload' AND w.run_id = m.run_id AND w.name = m.name"
			 " WHERE m.run_id = ?1"
			 " ORDER BY m.kind, coalesce(v.idx, w.idx), m.param", run_id, &matrix_rows,
			 &rows, n);
	*out = rows;
	return rc;
}

int store_count_failed(struct store *s, int64_t run_id, const char *variant,
		       const char *workload, int *failed, int *total)
{
	sqlite3_stmt *st = NULL;
	int ret = -1;

	*failed = *total = 0;
	if (prepare(s, "SELECT count(*), coalesce(sum(r.status <> 'ok'), 0)"
		    " FROM plan p JOIN results r ON r.run_id = p.run_id AND r.seq = p.seq"
		    " WHERE p.run_id = ?1 AND p.variant = ?2 AND p.workload = ?3"
		    " AND p.warmup = 0", &st, read_error) < 0)
		return -1;
	if (sqlite3_bind_int64(st, 1, run_id) |
	    sqlite3_bind_text(st, 2, variant, -1, SQLITE_STATIC) |
	    sqlite3_bind_text(st, 3, workload, -1, SQLITE_STATIC) ||
	    sqlite3_step(st) != SQLITE_ROW) {
		read_error(s);
		goto out;
	}
	*total = sqlite3_column_int(st, 0);
	*failed = sqlite3_column_int(st, 1);
	ret = 0;
out:
	sqlite3_finalize(st);
	return ret;
}

/*
 * store_each_value(): three scans of the run's rows in primary-key order,
 * merged by seq here (SQLite joins by a b-tree search per row and orders by
 * sorting; this does neither): plan (variant, workload, repetition and
 * warm-up of every seq), results (status and the four built-in metrics),
 * metric_values (by seq, then metric).  Names by index from two small
 * queries.  One snapshot: each statement takes its first step while the
 * others are pending, and SQLite keeps a connection's read transaction
 * while any statement is.  At 10^6 runs this reads in 0.5 s what one
 * ORDER BY over every value took 15 s for (bench/report-1e6.sh).
 */
static const char walk_plan_sql[] =
	"SELECT seq, variant_idx, workload_idx, repetition, warmup, block"
	" FROM plan WHERE run_id = ?1 ORDER BY seq";
static const char walk_results_sql[] =
	"SELECT seq, status, wall_s, user_s, sys_s, maxrss_kb"
	" FROM results WHERE run_id = ?1 ORDER BY seq";
static const char walk_values_sql[] =
	"SELECT seq, metric, unit, value, scaled"
	" FROM metric_values WHERE run_id = ?1 ORDER BY seq, metric";

static const struct { const char *name, *unit; } builtin_metrics[] = {
	{ "wall", "s" }, { "user", "s" }, { "sys", "s" }, { "maxrss", "KiB" },
};

/* One cursor of the walk: a statement and whether it is on a row. */
struct cursor {
	sqlite3_stmt *st;
	int row;		/* 1: on a row, 0: done */
	int seq;		/* column 0 of the row */
};

static int cursor_open(struct store *s, struct cursor *c, const char *sql, int64_t run_id)
{
	c->row = 0;
	return prepare_run(s, sql, run_id, &c->st);
}

static int cursor_step(struct store *s, struct cursor *c)
{
	int rc = sqlite3_step(c->st);

	c->row = rc == SQLITE_ROW;
	if (c->row)
		c->seq = sqlite3_column_int(c->st, 0);
	else if (rc != SQLITE_DONE)
		return read_error(s);
	return 0;
}

/* Step c until it is on seq or past it (or done). */
static int cursor_seek(struct store *s, struct cursor *c, int seq)
{
	while (c->row && c->seq < seq)
		if (cursor_step(s, c) < 0)
			return -1;
	return 0;
}

/* The metric names met in one walk, the built-ins first: their index is a
 * stored_value's metric_idx. */
struct metric_names {
	char **v;
	size_t n, alloc;
	size_t last;		/* index of the previous lookup */
};

/*
 * The index of name, added when new.  A seq's metrics come by name and
 * most seqs have the same set, so the one after the previous lookup is
 * tried first: one strcmp a row in the common case.
 */
static int metric_index(struct metric_names *mn, const char *name)
{
	size_t guess = mn->last + 1 < mn->n ? mn->last + 1 : 0;

	if (mn->n && !strcmp(mn->v[guess], name))
		return (int)(mn->last = guess);
	for (size_t i = 0; i < mn->n; i++)
		if (!strcmp(mn->v[i], name))
			return (int)(mn->last = i);
	ALLOC_GROW(mn->v, mn->n + 1, mn->alloc);
	mn->v[mn->n] = xstrdup(name);
	return (int)(mn->last = mn->n++);
}

/* Names by stored index (variant_idx / workload_idx of the plan). */
static const char *name_at(char **names, size_t n, int idx)
{
	return idx >= 0 && (size_t)idx < n ? names[idx] : "?";
}

/* The state of one walk. */
struct walk {
	struct store *s;
	const struct store_walk *w;
	struct cursor plan, res, val;
	struct metric_names mn;
	char **vn, **wn;	/* variant and workload names by idx */
	size_t nv, nw;
};

/*
 * The values of the result row res is on (its plan row is plan's): the
 * built-in metrics from the row, then its metric_values rows.  Returns 0,
 * -1 after an error, or what fn returned when that was non-zero.
 */
static int walk_result(struct walk *k)
{
	const struct store_walk *w = k->w;
	sqlite3_stmt *r = k->res.st, *p = k->plan.st;
	struct stored_value v = { .seq = k->res.seq };
	int ok, ret;

	v.variant_idx = sqlite3_column_int(p, 1);
	v.workload_idx = sqlite3_column_int(p, 2);
	v.variant = name_at(k->vn, k->nv, v.variant_idx);
	v.workload = name_at(k->wn, k->nw, v.workload_idx);
	v.repetition = sqlite3_column_int(p, 3);
	v.warmup = sqlite3_column_int(p, 4);
	v.block = sqlite3_column_int(p, 5);
	v.status = (const char *)sqlite3_column_text(r, 1);
	ok = v.status && !strcmp(v.status, "ok");
	if (w->total && !v.warmup && v.variant_idx >= 0 &&
	    (size_t)v.variant_idx < w->n_variants && v.workload_idx >= 0 &&
	    (size_t)v.workload_idx < w->n_workloads) {
		size_t i = (size_t)v.workload_idx * w->n_variants + (size_t)v.variant_idx;
		w->total[i]++;
		w->failed[i] += !ok;
	}
	if (!w->fn || (v.warmup && !w->include_warmup) || (!ok && !w->include_failed))
		return 0;
	for (int m = 0; m < (int)ARRAY_SIZE(builtin_metrics); m++) {
		if (sqlite3_column_type(r, 2 + m) == SQLITE_NULL)
			continue;
		v.metric = builtin_metrics[m].name;
		v.unit = builtin_metrics[m].unit;
		v.metric_idx = m;
		v.value = sqlite3_column_double(r, 2 + m);
		if ((ret = w->fn(&v, w->ctx)))
			return ret;
	}
	if (cursor_seek(k->s, &k->val, v.seq) < 0)
		return -1;
	while (k->val.row && k->val.seq == v.seq) {
		sqlite3_stmt *m = k->val.st;
		const char *name = (const char *)sqlite3_column_text(m, 1);

		v.metric = name ? name : "";
		v.unit = (const char *)sqlite3_column_text(m, 2);
		v.value = sqlite3_column_double(m, 3);
		v.scaled = sqlite3_column_int(m, 4);
		v.metric_idx = metric_index(&k->mn, v.metric);
		if ((ret = w->fn(&v, w->ctx)))
			return ret;
		if (cursor_step(k->s, &k->val) < 0)
			return -1;
	}
	return 0;
}

int store_walk_values(struct store *s, int64_t run_id, const struct store_walk *w)
{
	struct walk k = { .s = s, .w = w };
	int ret = -1;

	for (size_t i = 0; i < ARRAY_SIZE(builtin_metrics); i++)
		metric_index(&k.mn, builtin_metrics[i].name);
	if (store_variant_names(s, run_id, &k.vn, &k.nv) < 0 ||
	    store_workload_names(s, run_id, &k.wn, &k.nw) < 0 ||
	    cursor_open(s, &k.plan, walk_plan_sql, run_id) < 0 ||
	    cursor_open(s, &k.res, walk_results_sql, run_id) < 0 ||
	    cursor_open(s, &k.val, walk_values_sql, run_id) < 0 ||
	    cursor_step(s, &k.plan) < 0 || cursor_step(s, &k.res) < 0 ||
	    cursor_step(s, &k.val) < 0)
		goto out;
	while (k.res.row) {
		if (cursor_seek(s, &k.plan, k.res.seq) < 0)
			goto out;
		/* a result without a plan entry (the schema forbids it) is skipped */
		if (k.plan.row && k.plan.seq == k.res.seq && (ret = walk_result(&k)))
			goto out;
		ret = -1;
		if (cursor_step(s, &k.res) < 0)
			goto out;
	}
	ret = 0;
out:
	sqlite3_finalize(k.plan.st);
	sqlite3_finalize(k.res.st);
	sqlite3_finalize(k.val.st);
	free_names(k.mn.v, k.mn.n);
	free_names(k.vn, k.nv);
	free_names(k.wn, k.nw);
	return ret;
}

int store_each_value(struct store *s, int64_t run_id, int include_warmup,
		     int include_failed, store_value_fn fn, void *ctx)
{
	struct store_walk w = {
		.include_warmup = include_warmup,
		.include_failed = include_failed,
		.fn = fn,
		.ctx = ctx,
	};
	return store_walk_values(s, run_id, &w);
}

int store_experiment_text(struct store *s, int64_t run_id, char **text, size_t *len)
{
	sqlite3_stmt *st = NULL;
	const void *p;
	int ret = -1, n;

	*text = NULL;
	*len = 0;
	if (prepare_run(s, "SELECT e.text FROM runs r JOIN experiments e"
			" ON e.id = r.experiment_id WHERE r.id = ?1", run_id, &st) < 0)
		return -1;
	if (step_run_row(s, st, run_id) < 0)
		goto out;
	p = sqlite3_column_blob(st, 0);
	n = sqlite3_column_bytes(st, 0);
	*text = xmalloc((size_t)n + 1);
	if (n)
		memcpy(*text, p, (size_t)n);
	(*text)[n] = '\0';
	*len = (size_t)n;
	ret = 0;
out:
	sqlite3_finalize(st);
	return ret;
}

const char *const store_provenance_keys[STORE_N_PROVENANCE] = {
	"perturb_version", "kernel_release", "kernel_cmdline", "cpu_model",
	"cores", "governor", "smt", "aslr",
};

int store_run_provenance(struct store *s, int64_t run_id, char *out[STORE_N_PROVENANCE])
{
	sqlite3_stmt *st = NULL;
	int ret = -1;

	for (size_t i = 0; i < STORE_N_PROVENANCE; i++)
		out[i] = NULL;
	if (prepare_run(s, "SELECT perturb_version, kernel_release, kernel_cmdline,"
			" cpu_model, cores, governor, smt, aslr FROM runs WHERE id = ?1",
			run_id, &st) < 0)
		return -1;
	if (step_run_row(s, st, run_id) < 0)
		goto out;
	for (int i = 0; i < STORE_N_PROVENANCE; i++)
		out[i] = column_dup(st, i);
	ret = 0;
out:
	sqlite3_finalize(st);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Shards (engine/shard.h) */

int store_put_shards(struct store *s, int64_t run_id, const struct store_shard *sh, size_t n)
{
	sqlite3_stmt *st = NULL;
	int ret = -1;

	if (begin(s) < 0)
		return -1;
	if (prepare(s, "INSERT OR REPLACE INTO shards (run_id, shard, n_shards, seq_lo,"
		    " seq_hi, db, job, node, plan_sha256)"
		    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
		    &st, write_error) < 0)
		goto out;
	for (size_t i = 0; i < n; i++)
		if (step_bound(s, st, sqlite3_bind_int64(st, 1, run_id) |
				   sqlite3_bind_int(st, 2, sh[i].shard) |
				   sqlite3_bind_int(st, 3, sh[i].n_shards) |
				   sqlite3_bind_int(st, 4, sh[i].seq_lo) |
				   sqlite3_bind_int(st, 5, sh[i].seq_hi) |
				   bind_opt_text(st, 6, sh[i].db) |
				   bind_opt_text(st, 7, sh[i].job) |
				   bind_opt_text(st, 8, sh[i].node) |
				   bind_opt_text(st, 9, sh[i].plan_sha)) < 0)
			goto out;
	ret = commit(s);
out:
	sqlite3_finalize(st);
	if (ret < 0)
		rollback(s);
	return ret;
}

int store_latest_sharded_run(struct store *s, int64_t *run_id)
{
	return query_id(s, "SELECT max(run_id) FROM shards", NULL, run_id);
}

static void fill_shard(sqlite3_stmt *st, void *row)
{
	struct store_shard *x = row;

	x->shard = sqlite3_column_int(st, 0);
	x->n_shards = sqlite3_column_int(st, 1);
	x->seq_lo = sqlite3_column_int(st, 2);
	x->seq_hi = sqlite3_column_int(st, 3);
	x->db = column_dup(st, 4);
	x->job = column_dup(st, 5);
	x->node = column_dup(st, 6);
	x->plan_sha = column_dup(st, 7);
	x->n_results = sqlite3_column_int(st, 8);
}

static const size_t shard_strs[] = {
	offsetof(struct store_shard, db), offsetof(struct store_shard, job),
	offsetof(struct store_shard, node), offsetof(struct store_shard, plan_sha),
};
static const struct row_kind shard_rows = {
	sizeof(struct store_shard), fill_shard, shard_strs, ARRAY_SIZE(shard_strs),
};

void store_shards_free(struct store_shard *sh, size_t n)
{
	rows_free(&shard_rows, sh, n);
}

int store_load_shards(struct store *s, int64_t run_id, struct store_shard **out, size_t *n)
{
	void *rows;
	int rc = rows_of_run(s, "SELECT shard, n_shards, seq_lo, seq_hi, db, job, node, plan_sha256,"
			     " (SELECT count(*) FROM results r WHERE r.run_id = ?1"
			     "  AND r.seq >= s.seq_lo AND r.seq < s.seq_hi)"
			     " FROM shards s WHERE run_id = ?1 ORDER BY shard", run_id, &shard_rows,
			     &rows, n);

	*out = rows;
	return rc;
}

/*
 * The copy runs in this connection with the shard's file attached: one
 * INSERT ... SELECT per table, each a scan of the shard's rows in key
 * order with a primary-key probe of ours, so it costs O(rows log rows);
 * the seqs copied are collected first (temp.merge_new), so that a
 * result stored here already is skipped with its metric values.
 */
int store_merge_results(struct store *s, int64_t run_id, const char *src_db,
			int64_t src_run, int lo, int hi, size_t *added)
{
	static const char *const sql[] = {
		"CREATE TEMP TABLE IF NOT EXISTS merge_new (seq INTEGER PRIMARY KEY)",
		"DELETE FROM temp.merge_new",
		"INSERT INTO temp.merge_new SELECT r.seq FROM shard.results r"
		" WHERE r.run_id = ?2 AND r.seq >= ?3 AND r.seq < ?4 AND NOT EXISTS"
		" (SELECT 1 FROM main.results m WHERE m.run_id = ?1 AND m.seq = r.seq)",
		"INSERT INTO main.results (run_id, seq, status, exit_code, signal, reason,"
		" started, wall_s, user_s, sys_s, maxrss_kb, output_tail, output_dropped,"
		" cpu, start_mono)"
		" SELECT ?1, seq, status, exit_code, signal, reason, started, wall_s,"
		" user_s, sys_s, maxrss_kb, output_tail, output_dropped, cpu, start_mono"
		" FROM shard.results"
		" WHERE run_id = ?2 AND seq IN (SELECT seq FROM temp.merge_new)",
		"INSERT INTO main.metric_values (run_id, seq, metric, value, unit, scaled,"
		" time_enabled_ns, time_running_ns)"
		" SELECT ?1, seq, metric, value, unit, scaled, time_enabled_ns,"
		" time_running_ns FROM shard.metric_values"
		" WHERE run_id = ?2 AND seq IN (SELECT seq FROM temp.merge_new)",
		"INSERT OR IGNORE INTO main.unavailable (run_id, metric, reason)"
		" SELECT ?1, metric, reason FROM shard.unavailable WHERE run_id = ?2",
		"INSERT OR IGNORE INTO main.block_entries (run_id, first_seq, enter_s, leave_s)"
		" SELECT ?1, first_seq, enter_s, leave_s FROM shard.block_entries"
		" WHERE run_id = ?2 AND first_seq >= ?3 AND first_seq < ?4",
	};
	sqlite3_stmt *st = NULL;
	int ret = -1, attached = 0;

	*added = 0;
	if (prepare(s, "ATTACH DATABASE ?1 AS shard", &st, write_error) < 0)
		return -1;
	if (sqlite3_bind_text(st, 1, src_db, -1, SQLITE_STATIC) ||
	    sqlite3_step(st) != SQLITE_DONE) {
		error("cannot read shard database '%s': %s", src_db, sqlite3_errmsg(s->db));
		sqlite3_finalize(st);
		return -1;
	}
	sqlite3_finalize(st);
	st = NULL;
	attached = 1;
	if (begin(s) < 0)
		goto out;
	for (size_t i = 0; i < ARRAY_SIZE(sql); i++) {
		if (prepare(s, sql[i], &st, write_error) < 0)
			goto fail;
		/* parameters a statement does not name are not bound */
		for (int p = 1; p <= sqlite3_bind_parameter_count(st); p++) {
			const char *name = sqlite3_bind_parameter_name(st, p);
			int64_t v = name[1] == '1' ? run_id : name[1] == '2' ? src_run :
				    name[1] == '3' ? lo : hi;
			sqlite3_bind_int64(st, p, v);
		}
		if (sqlite3_step(st) != SQLITE_DONE) {
			error("cannot merge shard database '%s' into '%s': %s", src_db,
			      s->path, sqlite3_errmsg(s->db));
			goto fail;
		}
		if (i == 3)
			*added = (size_t)sqlite3_changes(s->db);
		sqlite3_finalize(st);
		st = NULL;
	}
	if (commit(s) < 0)
		goto fail;
	ret = 0;
	goto out;
fail:
	rollback(s);
	*added = 0;
out:
	sqlite3_finalize(st);
	if (attached)
		sqlite3_exec(s->db, "DETACH DATABASE shard", NULL, NULL, NULL);
	return ret;
}
