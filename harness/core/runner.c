/*
 * runner.c - see runner.h.
 *
 * The workload's stdout and stderr are memfds: the workload never blocks on
 * a pipe and perturb does not wake up while it runs.  After the run the
 * memfds are mapped read-only and scanned in chunks of whole lines, so that
 * a workload printing 100 MB costs page cache, not heap.
 */
#include "runner.h"
#include "counters/counters.h"
#include "proc.h"
#include "lib/util.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/pidfd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Metric regexes are matched on at most this much text at a time (whole
 * lines; a longer line is cut): bounds what regexec() allocates. */
#define SCAN_CHUNK (256 * 1024)

const char *run_status_name(enum run_status s)
{
	switch (s) {
	case RUN_OK: return "ok";
	case RUN_FAILED: return "failed";
	case RUN_CRASHED: return "crashed";
	case RUN_TIMEOUT: return "timeout";
	case RUN_ERROR: return "error";
	case RUN_INTERRUPTED: return "interrupted";
	}
	return "unknown";
}

/* ---- output ---- */

struct output {
	int fd;
	const char *data;	/* mapped, or NULL when empty */
	size_t len;
};

static int output_map(struct output *o)
{
	struct stat st;

	o->data = NULL;
	o->len = 0;
	if (fstat(o->fd, &st) < 0)
		return error("cannot stat the workload's output: %s", strerror(errno));
	if (!st.st_size)
		return 0;
	o->data = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, o->fd, 0);
	if (o->data == MAP_FAILED) {
		o->data = NULL;
		return error("cannot map the workload's output: %s", strerror(errno));
	}
	o->len = (size_t)st.st_size;
	return 0;
}

static void output_unmap(struct output *o)
{
	if (o->data)
		munmap((void *)o->data, o->len);
	o->data = NULL;
}

/*
 * First match of re in text, line-wise: the text is cut into chunks of
 * whole lines of at most SCAN_CHUNK bytes.  Returns 1 and fills m[0..2].
 */
static int scan(const regex_t *re, const char *text, size_t len, regmatch_t *m)
{
	size_t off = 0;

	while (off < len) {
		size_t n = len - off;
		if (n > SCAN_CHUNK) {
			const char *nl = memrchr(text + off, '\n', SCAN_CHUNK);
			n = nl ? (size_t)(nl - (text + off)) + 1 : SCAN_CHUNK;
		}
		m[0].rm_so = 0;
		m[0].rm_eo = (regoff_t)n;
		if (!regexec(re, text + off, 2, m, REG_STARTEND)) {
			m[0].rm_so += (regoff_t)off;
			m[0].rm_eo += (regoff_t)off;
			if (m[1].rm_so >= 0) {
				m[1].rm_so += (regoff_t)off;
				m[1].rm_eo += (regoff_t)off;
			}
			return 1;
		}
		off += n;
	}
	return 0;
}

/*
 * Extract every metric from stdout, then stderr.  The config compiles the
 * regexes POSIX extended; here they are recompiled with REG_NEWLINE so that
 * one regexec() over a chunk of lines finds the first line-wise match
 * ('^' and '$' at line boundaries, '.' never crossing a line).
 */
static void extract_metrics(const struct run_request *req, struct output *out,
			    struct run_result *res)
{
	res->values = xcalloc(req->n_metrics, sizeof(*res->values));
	for (size_t i = 0; i < req->n_metrics; i++) {
		const struct metric_def *md = &req->metrics[i];
		struct metric_value *v = &res->values[res->n_values];
		regex_t own;
		const regex_t *re = &md->re;
		regmatch_t m[2];
		int found = 0, have_own = 0;
		char text[128], *end;
		size_t so, eo;

		if (md->regex_src &&
		    !regcomp(&own, md->regex_src, REG_EXTENDED | REG_NEWLINE)) {
			re = &own;
			have_own = 1;
		}
		for (int k = 0; k < 2 && !found; k++) {
			if (out[k].data)
				found = scan(re, out[k].data, out[k].len, m);
			if (found) {
				int g = md->has_group && m[1].rm_so >= 0;
				so = (size_t)m[g].rm_so;
				eo = (size_t)m[g].rm_eo;
				if (eo - so >= sizeof(text))
					eo = so + sizeof(text) - 1;
				memcpy(text, out[k].data + so, eo - so);
				text[eo - so] = '\0';
			}
		}
		if (have_own)
			regfree(&own);
		if (!found) {
			if (res->status == RUN_OK) {
				res->status = RUN_FAILED;
				snprintf(res->reason, sizeof(res->reason),
					 "metric '%s' not found in output", md->name);
			}
			continue;
		}
		errno = 0;
		v->value = strtod(text, &end);
		while (*end == ' ' || *end == '\t' || *end == '\r')
			end++;
		if (end == text || *end || errno || !isfinite(v->value)) {
			if (res->status == RUN_OK) {
				res->status = RUN_FAILED;
				snprintf(res->reason, sizeof(res->reason),
					 "metric '%s': cannot parse '%s' as a number",
					 md->name, text);
			}
			continue;
		}
		v->name = xstrdup(md->name);
		v->unit = xstrdup(md->unit ? md->unit : "");
		res->n_values++;
	}
}

/*
 * The last RUNNER_TAIL_BYTES of stdout followed by stderr, starting on a
 * UTF-8 character boundary, NULs shown as spaces.
 */
static char *output_tail(const struct output *out)
{
	char *buf = xmalloc(RUNNER_TAIL_BYTES + 1), *p;
	size_t want = RUNNER_TAIL_BYTES, len = 0;
	size_t from_err = out[1].len < want ? out[1].len : want;
	size_t from_out = want - from_err;

	if (from_out > out[0].len)
		from_out = out[0].len;
	if (from_out)
		memcpy(buf, out[0].data + out[0].len - from_out, from_out);
	len = from_out;
	if (from_err)
		memcpy(buf + len, out[1].data + out[1].len - from_err, from_err);
	len += from_err;
	buf[len] = '\0';

	p = buf;
	if (out[0].len + out[1].len > len)
		while (p < buf + len && ((unsigned char)*p & 0xc0) == 0x80)
			p++;
	for (char *q = p; q < buf + len; q++)
		if (!*q)
			*q = ' ';
	if (p != buf)
		memmove(buf, p, (size_t)(buf + len - p) + 1);
	return buf;
}

/* ---- counters ---- */

static void attach_counters(pid_t pid, void *arg)
{
	counters_attach(arg, pid);
}

/* Append the counters' readings to res->values. */
static void add_counters(struct counter_set *set, struct run_result *res)
{
	size_t n = counters_count(set), got = 0;
	struct counter_reading *rd = xcalloc(n ? n : 1, sizeof(*rd));

	counters_collect(set, rd, &got);
	res->values = xrealloc(res->values, (res->n_values + got + 1) * sizeof(*res->values));
	for (size_t i = 0; i < got; i++) {
		struct metric_value *v = &res->values[res->n_values++];
		memset(v, 0, sizeof(*v));
		v->name = xstrdup(rd[i].name);
		v->unit = xstrdup(rd[i].unit);
		v->value = rd[i].value;
		v->scaled = rd[i].scaled;
		v->time_enabled_ns = rd[i].time_enabled_ns;
		v->time_running_ns = rd[i].time_running_ns;
	}
	free(rd);
}

/* ---- the run ---- */

static void set_reason(struct run_result *res, const char *fmt, ...) PRINTF(2, 3);
static void set_reason(struct run_result *res, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(res->reason, sizeof(res->reason), fmt, ap);
	va_end(ap);
}

static void classify(const struct run_request *req, int status, int how,
		     struct run_result *res)
{
	if (how == 0) {
		res->status = RUN_TIMEOUT;
		set_reason(res, "timed out after %g s", req->timeout_s);
	} else if (how == PROC_STOP) {
		res->status = RUN_INTERRUPTED;
		set_reason(res, "interrupted by signal %d (%s)", stop_requested(),
			   strsignal(stop_requested()));
	} else if (WIFEXITED(status)) {
		res->exit_code = WEXITSTATUS(status);
		if (res->exit_code) {
			res->status = RUN_FAILED;
			set_reason(res, "exited with status %d", res->exit_code);
		} else {
			res->status = RUN_OK;
		}
	} else if (WIFSIGNALED(status)) {
		res->status = RUN_CRASHED;
		res->signal = WTERMSIG(status);
		set_reason(res, "killed by signal %d (%s)", res->signal,
			   strsignal(res->signal));
	} else {
		res->status = RUN_FAILED;
		proc_describe_status(status, res->reason, sizeof(res->reason));
	}
}

int runner_run(const struct run_request *req, struct run_result *res)
{
	struct output out[2] = { { .fd = -1 }, { .fd = -1 } };
	struct spawn_opts o = {
		.argv = req->argv, .envp = req->envp,
		.cpus = req->cpus, .n_cpus = req->cpus ? req->n_cpus : 0,
		.cwd = req->cwd,
	};
	struct counter_set *counters = NULL;
	struct rusage ru;
	double t0, t1;
	int pidfd = -1, ret = -1, how, status = 0;
	pid_t pid, r;

	memset(res, 0, sizeof(*res));
	now_iso8601(res->started, sizeof(res->started));

	if (stop_requested()) {
		res->status = RUN_INTERRUPTED;
		set_reason(res, "not started: perturb is stopping");
		ret = 0;
		goto out;
	}
	out[0].fd = memfd_create("perturb-stdout", MFD_CLOEXEC);
	out[1].fd = memfd_create("perturb-stderr", MFD_CLOEXEC);
	if (out[0].fd < 0 || out[1].fd < 0) {
		error("cannot create a memory file: %s", strerror(errno));
		goto out;
	}
	o.out_fd = out[0].fd;
	o.err_fd = out[1].fd;
	if (counters_n_available(req->counters)) {
		counters = req->counters;
		o.attach = attach_counters;
		o.attach_arg = counters;
	}

	o.started = &t0;
	t0 = now_mono();
	pid = proc_spawn_reason(&o, res->reason, sizeof(res->reason));
	if (pid < 0) {
		res->status = RUN_ERROR;
		ret = 0;
		goto out;
	}
	pidfd = pidfd_open(pid, 0);
	if (pidfd < 0) {
		error("cannot watch process %d: %s", (int)pid, strerror(errno));
		kill(-pid, SIGKILL);
		waitpid(pid, NULL, 0);
		goto out;
	}

	{
		struct pollfd p = { .fd = pidfd, .events = POLLIN };
		how = proc_poll(&p, 1, req->timeout_s > 0 ? t0 + req->timeout_s : 0, 1);
	}
	if (how < 0 && how != PROC_STOP) {
		error("cannot wait for process %d: %s", (int)pid, strerror(errno));
		how = PROC_STOP;
	}
	if (how != 1)
		proc_kill_group(pid, pidfd, STOP_KILL_GRACE_S);
	t1 = now_mono();
	kill(-pid, SIGKILL);	/* what the workload left behind */
	do
		r = wait4(pid, &status, 0, &ru);
	while (r < 0 && errno == EINTR);
	if (r < 0) {
		error("cannot reap process %d: %s", (int)pid, strerror(errno));
		goto out;
	}

	res->wall_s = t1 - t0;
	res->user_s = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6;
	res->sys_s = (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
	res->maxrss_kb = ru.ru_maxrss;
	classify(req, status, how, res);

	if (output_map(&out[0]) < 0 || output_map(&out[1]) < 0)
		goto out;
	if (res->status == RUN_OK && req->n_metrics)
		extract_metrics(req, out, res);
	if (counters && res->status != RUN_INTERRUPTED)
		add_counters(counters, res);
	res->out_tail = output_tail(out);
	ret = 0;
out:
	counters_detach(counters);
	for (int k = 0; k < 2; k++) {
		output_unmap(&out[k]);
		if (out[k].fd >= 0)
			close(out[k].fd);
	}
	if (pidfd >= 0)
		close(pidfd);
	if (!res->out_tail)
		res->out_tail = xstrdup("");
	return ret;
}

void run_result_release(struct run_result *r)
{
	for (size_t i = 0; i < r->n_values; i++) {
		free(r->values[i].name);
		free(r->values[i].unit);
	}
	free(r->values);
	free(r->out_tail);
	r->values = NULL;
	r->n_values = 0;
	r->out_tail = NULL;
}
