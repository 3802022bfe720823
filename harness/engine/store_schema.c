/*
 * store_schema.c - the results database's schema, its migrations, and
 * opening and closing it (store.h).
 *
 * Durability: journal_mode=WAL with synchronous=NORMAL.  A commit is in
 * the WAL (in the page cache) when it returns, so every committed result
 * survives a SIGKILL or crash of perturb, and the database is never left
 * half-written; a power loss or kernel crash can lose the last results
 * (not corrupt the file).  A database perturb creates is made with
 * synchronous=OFF, up to its schema (configure(), store_open()): the five
 * fsyncs of its journal_mode switch and its first WAL commit were 2 to 3 ms
 * of every new study (issue 25), and a file that held nothing before has
 * nothing to protect; the study's first checkpoint syncs it (at its end at
 * the latest).  So a power loss during a new database's first study, which
 * loses that study's results either way, can also leave the file
 * unreadable (SQLite refuses it: "file is not a database"); a database that
 * was there before is never at that risk.  Results are committed in batches of at most
 * STORE_BATCH_S (store.h): a SIGKILL loses those of the open batch.  synchronous=FULL would fsync the WAL at every
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
#include "store_int.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/util.h"

/*
 * Schema migrations: migrations[N] takes a database from user_version N to
 * N + 1.  store_open() runs each one in its own transaction together with
 * the user_version update.  To change the schema: add a function, append it
 * here, bump STORE_SCHEMA_VERSION in store.h, and make the same change to
 * schema_new below (a new database's).  Never edit a released one.
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

/* v10: what a run measured (engine/revision.h, docs/history.md):
 * runs.label (perturb run --label) and the revision: work tree's repo,
 * git describe and commit_id; NULL for runs stored before.  An index by
 * label for --run LABEL.  Order-independent: each column is added only
 * when it is missing. */
static int migrate_revision(sqlite3 *db)
{
	static const char *const cols[] = { "label", "repo", "revision", "commit_id" };
	int rc = SQLITE_OK;

	for (size_t i = 0; i < ARRAY_SIZE(cols) && rc == SQLITE_OK; i++) {
		char ddl[80];
		snprintf(ddl, sizeof(ddl), "ALTER TABLE runs ADD COLUMN %s TEXT;", cols[i]);
		rc = add_missing_column(db, "runs", cols[i], ddl);
	}
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, "CREATE INDEX IF NOT EXISTS runs_by_label ON runs(label);",
				  NULL, NULL, NULL);
	return rc;
}

/* v11: workloads.primary_metric, a workload's primary: (struct workload's
 * primary; NULL: wall): the metric of its answer in the report
 * (reports/doc.h).  Order-independent: added only when it is missing. */
static int migrate_primary(sqlite3 *db)
{
	return add_missing_column(db, "workloads", "primary_metric",
				  "ALTER TABLE workloads ADD COLUMN primary_metric TEXT;");
}

/* Each returns an SQLite result code. */
/*
 * A new database gets at once the schema the migrations make, as SQLite
 * keeps its text (sqlite_master, in its order): each ALTER TABLE of the
 * migrations reloads the whole schema, 6 ms of perturb's CPU at the start
 * of every study into a new file (12 us a run of a 500-run study).  The
 * test store/a_new_database_has_the_schema_the_migrations_make compares
 * the two, text for text: a new migration adds its change here too (its
 * message gives the text to paste).
 */
static const char schema_new[] =
	"CREATE TABLE experiments ( id INTEGER PRIMARY KEY, name TEXT, path TEXT,"
	" text TEXT NOT NULL, sha256 TEXT NOT NULL UNIQUE);"

	"CREATE TABLE runs ( id INTEGER PRIMARY KEY AUTOINCREMENT,"
	" experiment_id INTEGER NOT NULL REFERENCES experiments(id), name TEXT,"
	" baseline TEXT, seed TEXT NOT NULL, \"order\" TEXT NOT NULL, argv TEXT,"
	" started TEXT NOT NULL, ended TEXT,"
	" status TEXT NOT NULL CHECK (status IN  ('running', 'completed', 'interrupted',"
	" 'failed')), perturb_version TEXT, machine_json TEXT, kernel_release TEXT,"
	" kernel_cmdline TEXT, cpu_model TEXT, cores INTEGER, governor TEXT, smt TEXT,"
	" aslr TEXT, loadavg TEXT, label TEXT, repo TEXT, revision TEXT, commit_id TEXT);"

	"CREATE INDEX runs_by_experiment ON runs(experiment_id);"

	"CREATE TABLE variants ( run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
	" idx INTEGER NOT NULL, name TEXT NOT NULL, description TEXT,"
	" timebase TEXT NOT NULL DEFAULT 'real', PRIMARY KEY (run_id, idx),"
	" UNIQUE (run_id, name)) WITHOUT ROWID;"

	"CREATE TABLE workloads ( run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
	" idx INTEGER NOT NULL, name TEXT NOT NULL,"
	" kind TEXT NOT NULL CHECK (kind IN ('real', 'micro')), description TEXT,"
	" primary_metric TEXT, PRIMARY KEY (run_id, idx), UNIQUE (run_id,"
	" name)) WITHOUT ROWID;"

	"CREATE TABLE plan ( run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
	" seq INTEGER NOT NULL, variant TEXT NOT NULL, workload TEXT NOT NULL,"
	" variant_idx INTEGER NOT NULL, workload_idx INTEGER NOT NULL,"
	" repetition INTEGER NOT NULL, warmup INTEGER NOT NULL, round INTEGER NOT NULL,"
	" block INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (run_id, seq),"
	" FOREIGN KEY (run_id, variant_idx) REFERENCES variants(run_id, idx),"
	" FOREIGN KEY (run_id, workload_idx) REFERENCES workloads(run_id,"
	" idx)) WITHOUT ROWID;"

	"CREATE TABLE results ( run_id INTEGER NOT NULL, seq INTEGER NOT NULL,"
	" status TEXT NOT NULL CHECK (status IN  ('ok', 'failed', 'crashed', 'timeout',"
	" 'error')), exit_code INTEGER, signal INTEGER, reason TEXT, started TEXT,"
	" wall_s REAL, user_s REAL, sys_s REAL, maxrss_kb INTEGER, output_tail TEXT,"
	" output_dropped INTEGER NOT NULL DEFAULT 0, cpu INTEGER, start_mono REAL,"
	" cost_s REAL, PRIMARY KEY (run_id, seq), FOREIGN KEY (run_id,"
	" seq) REFERENCES plan(run_id, seq) ON DELETE CASCADE) WITHOUT ROWID;"

	"CREATE TABLE metric_values ( run_id INTEGER NOT NULL, seq INTEGER NOT NULL,"
	" metric TEXT NOT NULL, value REAL NOT NULL, unit TEXT NOT NULL DEFAULT '',"
	" scaled INTEGER NOT NULL DEFAULT 0, time_enabled_ns INTEGER,"
	" time_running_ns INTEGER, PRIMARY KEY (run_id, seq, metric), FOREIGN KEY (run_id,"
	" seq) REFERENCES results(run_id, seq) ON DELETE CASCADE) WITHOUT ROWID;"

	"CREATE TABLE unavailable ( run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
	" metric TEXT NOT NULL, reason TEXT, PRIMARY KEY (run_id, metric)) WITHOUT ROWID;"

	"CREATE TABLE matrix ( run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
	" kind TEXT NOT NULL CHECK (kind IN ('variant', 'workload')), name TEXT NOT NULL,"
	" base TEXT NOT NULL, param TEXT NOT NULL, value TEXT NOT NULL, x REAL,"
	" is_list INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (run_id, kind, name,"
	" param)) WITHOUT ROWID;"

	"CREATE TABLE shards ( run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
	" shard INTEGER NOT NULL, n_shards INTEGER NOT NULL, seq_lo INTEGER NOT NULL,"
	" seq_hi INTEGER NOT NULL, db TEXT, job TEXT, node TEXT, plan_sha256 TEXT,"
	" PRIMARY KEY (run_id, shard)) WITHOUT ROWID;"

	"CREATE TABLE calibration ( run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
	" workload TEXT NOT NULL, hits REAL, hits_metric TEXT, metric TEXT,"
	" ops_metric TEXT, PRIMARY KEY (run_id, workload)) WITHOUT ROWID;"

	"CREATE TABLE tracer_variants ( run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
	" variant TEXT NOT NULL, tracer TEXT NOT NULL, attach TEXT NOT NULL,"
	" PRIMARY KEY (run_id, variant)) WITHOUT ROWID;"

	"CREATE TABLE block_entries ( run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
	" first_seq INTEGER NOT NULL, enter_s REAL NOT NULL, leave_s REAL,"
	" PRIMARY KEY (run_id, first_seq)) WITHOUT ROWID;"

	"CREATE INDEX runs_by_label ON runs(label);";

/* Tests: new databases made by the migrations, as before schema_new. */
static int new_by_migrations;

void store_new_by_migrations(int on)
{
	new_by_migrations = on;
}

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
	migrate_revision,
	migrate_primary,
};

_Static_assert(ARRAY_SIZE(migrations) == STORE_SCHEMA_VERSION,
	       "one migration per schema version");
static int exec(struct store *s, const char *sql, int (*fail)(struct store *))
{
	if (sqlite3_exec(s->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		return fail(s);
	return 0;
}

static int user_version(struct store *s, int *version)
{
	sqlite3_stmt *st = NULL;
	int ret = 0;

	if (db_prepare(s, "PRAGMA user_version", &st, db_read_error) < 0)
		return -1;
	if (sqlite3_step(st) != SQLITE_ROW)
		ret = db_read_error(s);
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

	if (db_prepare(s, "SELECT count(*) FROM sqlite_master", &st, db_read_error) < 0)
		return -1;
	if (sqlite3_step(st) != SQLITE_ROW)
		ret = db_read_error(s);
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

	if (db_begin(s) < 0)
		return -1;
	/* Read again under the write lock: another perturb may have
	 * migrated the file since we looked. */
	if (user_version(s, &version) < 0)
		goto fail;
	if (version == 0 && check_empty(s) < 0)
		goto fail;
	if (version == 0 && !new_by_migrations) {
		if (exec(s, schema_new, db_write_error) < 0)
			goto fail;
		version = STORE_SCHEMA_VERSION;
	}
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
	if (exec(s, sql, db_write_error) < 0 || db_commit(s) < 0)
		goto fail;
	goto out;
fail:
	db_rollback(s);
	ret = -1;
out:
	sqlite3_free(sql);
	return ret;
}

static int configure(struct store *s, int created)
{
	sqlite3_stmt *st = NULL;
	const char *mode;
	int ret = 0;

	/* Set outside any transaction (foreign_keys is a no-op inside one). */
	if (exec(s, "PRAGMA foreign_keys = ON", db_read_error) < 0 ||
	    exec(s, created ? "PRAGMA synchronous = OFF" : "PRAGMA synchronous = NORMAL",
		 db_read_error) < 0)
		return -1;
	if (db_prepare(s, "PRAGMA journal_mode = WAL", &st, db_write_error) < 0)
		return -1;
	if (sqlite3_step(st) != SQLITE_ROW) {
		ret = db_write_error(s);
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

/* 0 when s->path's -wal is missing or empty; else -1 (printed): its
 * changes would be missed by an immutable read. */
static int wal_pending(struct store *s)
{
	char *wal = xasprintf("%s-wal", s->path);
	struct stat st;
	int ret = 0;

	if (stat(wal, &st) == 0 && st.st_size > 0)
		ret = error("cannot read results database '%s': its write-ahead log '%s' holds "
			    "changes, and this user cannot make the shared-memory file beside "
			    "it to read them (write access to the folder is needed while a "
			    "perturb is writing it; read it as its owner, or when that "
			    "perturb has ended)", s->path, wal);
	free(wal);
	return ret;
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
	if (db_prepare(s, "SELECT count(*) FROM sqlite_master", &st, db_read_error) < 0)
		return -1;
	if (sqlite3_step(st) != SQLITE_ROW)
		ret = db_read_error(s);
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

	if (db_prepare(s, "PRAGMA quick_check", &st, db_read_error) < 0)
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
		return db_read_error(s);
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
	s->batch_s = STORE_BATCH_S;
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
	/* A WAL database on a read-only medium, or in a folder this user
	 * cannot write (sudo perturb run, then perturb gate as the CI's
	 * user: docs/ci.md): SQLite cannot make its -shm file (CANTOPEN, or
	 * READONLY_CANTINIT / _DIRECTORY).  With no changes waiting in its
	 * -wal the file is all there is: read it as immutable. */
	if (s->readonly) {
		int rc = user_version_quiet(s, &version);
		if ((rc == SQLITE_CANTOPEN || rc == SQLITE_READONLY) &&
		    (wal_pending(s) < 0 || reopen_immutable(s) < 0))
			goto fail;
	}
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
	if (configure(s, !!(flags & SQLITE_OPEN_CREATE)) < 0)
		goto fail;
	if (version < STORE_SCHEMA_VERSION && migrate(s) < 0)
		goto fail;
	if ((flags & SQLITE_OPEN_CREATE) && exec(s, "PRAGMA synchronous = NORMAL", db_read_error) < 0)
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
	store_flush(s);
	for (int i = 0; i < ST_COUNT; i++)
		sqlite3_finalize(s->cache[i]);
	sqlite3_close(s->db);
	free(s->pending);	/* emptied by store_flush() */
	free(s->path);
	free(s);
}
