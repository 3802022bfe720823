/* slurm.c - see slurm.h */
#include "slurm.h"
#include "core/proc.h"
#include "lib/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

int slurm_available(char *why, size_t len)
{
	if (program_exists("sbatch") && program_exists("squeue") && program_exists("scontrol"))
		return 1;
	snprintf(why, len, "Slurm's commands (sbatch, squeue, scontrol) are not on PATH");
	return 0;
}

int slurm_write_marker(const char *dir, char **marker, char **token)
{
	unsigned char r[16];
	char hex[33];
	FILE *f;

	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
		return error("cannot draw a random token: %s", strerror(errno));
	for (size_t i = 0; i < sizeof(r); i++)
		snprintf(hex + 2 * i, 3, "%02x", r[i]);
	*marker = xasprintf("%s/.perturb-shared", dir);
	*token = xstrdup(hex);
	if (!(f = fopen(*marker, "w")) || fprintf(f, "%s\n", hex) < 0 || fclose(f)) {
		error("cannot write '%s': %s", *marker, strerror(errno));
		return -1;
	}
	return 0;
}

char *slurm_escape_k(const char *s)
{
	struct strbuf sb = STRBUF_INIT;

	for (; *s; s++)
		strbuf_add(&sb, *s == '{' ? "{{" : s, *s == '{' ? 2 : 1);
	return strbuf_detach(&sb);
}

int slurm_write_script(const char *path, const char *marker, const char *token,
		       char *const *argv)
{
	struct strbuf sb = STRBUF_INIT;
	FILE *f;
	int ret = 0;

	strbuf_addstr(&sb, "#!/bin/sh\n# One shard of a perturb study (docs/distributed.md).\n"
			   "# The folder must be the one the submitter sees:\nif [ \"$(cat ");
	strbuf_add_shell_word(&sb, marker);
	strbuf_addf(&sb, " 2>/dev/null)\" != %s ]; then\n", token);
	/* the path a word of its own, never inside double quotes */
	strbuf_addstr(&sb, "\tprintf 'perturb: error: %s is not seen from node %s: the folder is "
			   "not on a filesystem shared with the submitting machine\\n' ");
	strbuf_add_shell_word(&sb, marker);
	strbuf_addstr(&sb, " \"$SLURMD_NODENAME\" >&2\n\texit 2\nfi\nexec");
	for (size_t i = 0; argv[i]; i++) {
		const char *a = argv[i];
		struct strbuf part = STRBUF_INIT;
		strbuf_addstr(&sb, " ");
		/* {K}: the array index, outside the quotes; {{: a literal { */
		for (; *a; a++) {
			if (!strncmp(a, "{K}", 3) || !strncmp(a, "{{", 2)) {
				if (a[1] == '{') {
					strbuf_add(&part, a++, 1);
					continue;
				}
				if (part.len)
					strbuf_add_shell_word(&sb, part.buf);
				strbuf_reset(&part);
				strbuf_addstr(&sb, "\"$SLURM_ARRAY_TASK_ID\"");
				a += 2;
				continue;
			}
			strbuf_add(&part, a, 1);
		}
		if (part.len || !*argv[i])
			strbuf_add_shell_word(&sb, part.buf ? part.buf : "");
		strbuf_release(&part);
	}
	strbuf_addstr(&sb, "\n");
	if (!(f = fopen(path, "w")) || fputs(sb.buf, f) < 0 || fclose(f) || chmod(path, 0755) < 0)
		ret = error("cannot write '%s': %s", path, strerror(errno));
	strbuf_release(&sb);
	return ret;
}

/* Slurm's time limit from seconds: D-HH:MM:SS (rounded up). */
static char *slurm_time(double s)
{
	long t = (long)s + ((double)(long)s < s);
	return xasprintf("%ld-%02ld:%02ld:%02ld", t / 86400, t / 3600 % 24, t / 60 % 60, t % 60);
}

int slurm_submit(const struct slurm_settings *cfg, const char *script, const char *array,
		 const char *name, const char *outdir, char **job_id)
{
	size_t n = 0, cap = 16 + cfg->sbatch_args.n;
	char **argv = xcalloc(cap, sizeof(char *)), *out = NULL;
	int ret = -1;

	*job_id = NULL;
	argv[n++] = xstrdup("sbatch");
	argv[n++] = xstrdup("--parsable");
	argv[n++] = xstrdup("--exclusive");
	if (cfg->max_parallel > 0)
		argv[n++] = xasprintf("--array=%s%%%d", array, cfg->max_parallel);
	else
		argv[n++] = xasprintf("--array=%s", array);
	argv[n++] = xasprintf("--job-name=%s", name);
	argv[n++] = xasprintf("--output=%s/slurm-%%A_%%a.out", outdir);
	argv[n++] = xasprintf("--chdir=%s", outdir);
	if (cfg->partition)
		argv[n++] = xasprintf("--partition=%s", cfg->partition);
	if (cfg->account)
		argv[n++] = xasprintf("--account=%s", cfg->account);
	if (cfg->time_s > 0) {
		char *t = slurm_time(cfg->time_s);
		argv[n++] = xasprintf("--time=%s", t);
		free(t);
	}
	for (size_t i = 0; i < cfg->sbatch_args.n; i++)
		argv[n++] = xstrdup(cfg->sbatch_args.v[i]);
	argv[n++] = xstrdup(script);
	if (proc_capture(argv, NULL, &out) < 0)
		goto out;
	/* --parsable: "JOBID" or "JOBID;CLUSTER" */
	out[strcspn(out, ";\n")] = '\0';
	if (!*out) {
		error("sbatch printed no job id");
		goto out;
	}
	*job_id = xstrdup(out);
	ret = 0;
out:
	free(out);
	argv_free(argv);
	return ret;
}

/* The value of KEY= in a line of `scontrol -o show job` into buf. */
static void field(const char *line, const char *key, char *buf, size_t len)
{
	const char *p = line;
	size_t kl = strlen(key);

	buf[0] = '\0';
	while ((p = strstr(p, key))) {
		if ((p == line || p[-1] == ' ') && p[kl] == '=') {
			size_t n = strcspn(p + kl + 1, " \n");
			snprintf(buf, len, "%.*s", (int)n, p + kl + 1);
			return;
		}
		p += kl;
	}
}

/* ArrayTaskId=2 or, for pending tasks still in one record, 2-5,7%2. */
static void add_tasks(const char *ids, const struct slurm_task *proto, struct slurm_task **t,
		      size_t *n, size_t *alloc)
{
	char *copy = xstrdup(ids), *save = NULL, *pct = strchr(copy, '%');

	if (pct)
		*pct = '\0';
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		long lo, hi;
		char *dash = strchr(tok, '-');
		if (dash)
			*dash = '\0';
		if (parse_long(tok, 0, 1000000, &lo) < 0 ||
		    (dash ? parse_long(dash + 1, lo, 1000000, &hi) : (hi = lo, 0)) < 0)
			continue;
		for (long i = lo; i <= hi; i++) {
			ALLOC_GROW(*t, *n + 1, *alloc);
			(*t)[*n] = *proto;
			(*t)[(*n)++].index = (int)i;
		}
	}
	free(copy);
}

int slurm_tasks(const char *job_id, struct slurm_task **tasks, size_t *n)
{
	char *argv[] = { "scontrol", "-o", "show", "job", (char *)job_id, NULL };
	char *out = NULL, *save = NULL;
	size_t alloc = 0;

	*tasks = NULL;
	*n = 0;
	if (proc_capture(argv, NULL, &out) < 0) {
		/* a job the controller forgot is not an error */
		return 0;
	}
	for (char *line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct slurm_task t = { 0 };
		char ids[256];
		field(line, "ArrayTaskId", ids, sizeof(ids));
		field(line, "JobState", t.state, sizeof(t.state));
		field(line, "Reason", t.reason, sizeof(t.reason));
		field(line, "NodeList", t.node, sizeof(t.node));
		if (!strcmp(t.reason, "None"))
			t.reason[0] = '\0';
		if (!strcmp(t.node, "(null)"))
			t.node[0] = '\0';
		if (*ids)
			add_tasks(ids, &t, tasks, n, &alloc);
	}
	free(out);
	return 0;
}

int slurm_active(char *const *job_ids, size_t n_jobs, size_t *active)
{
	/* every job of the queue, so that a job Slurm forgot is no error */
	char *argv[] = { "squeue", "-h", "-r", "-o", "%i", NULL };
	char *out = NULL, *save = NULL;

	*active = 0;
	if (!n_jobs)
		return 0;
	if (proc_capture(argv, NULL, &out) < 0)
		return -1;
	for (char *line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		for (size_t i = 0; i < n_jobs; i++) {
			size_t l = strlen(job_ids[i]);
			if (!strncmp(line, job_ids[i], l) && (line[l] == '_' || line[l] == '\0'))
				(*active)++;
		}
	free(out);
	return 0;
}
