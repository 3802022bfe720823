/*
 * counters_perf.c - the perf_event_open backend; see counters.h and
 * counters_backend.h.  No PAPI and nothing of counters.c: the guest agent
 * (harness/backends/guest/agent.c) links it with counters_names.c and opens,
 * probes and reads its counters with these same functions.
 *
 * Every counter is its own event (no group): the kernel multiplexes each
 * one on its own, which its time_enabled and time_running tell, and one
 * counter that cannot be opened for a run does not take the others with
 * it.
 */
#include "counters_backend.h"
#include "lib/util.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static void fill_attr(const struct perf_spec *ps, struct perf_event_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = ps->type;
	a->config = ps->config;
	a->disabled = 1;
	a->inherit = 1;
	a->enable_on_exec = 1;
	a->exclude_hv = 1;
	a->exclude_user = ps->mode == COUNTER_MODE_KERNEL;
	a->exclude_kernel = ps->mode == COUNTER_MODE_USER;
	a->read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
}

int perf_counter_open(const struct perf_spec *ps, pid_t pid)
{
	struct perf_event_attr a;
	long fd;

	fill_attr(ps, &a);
	fd = syscall(SYS_perf_event_open, &a, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -errno;
	return (int)fd;
}

int perf_counter_read(int fd, uint64_t *value, uint64_t *enabled, uint64_t *running)
{
	uint64_t buf[3];
	ssize_t n;

	do
		n = read(fd, buf, sizeof(buf));
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (n != (ssize_t)sizeof(buf))
		return -EIO;
	*value = buf[0];
	*enabled = buf[1];
	*running = buf[2];
	return 0;
}

int counter_scale(uint64_t raw, uint64_t enabled, uint64_t running, double *value)
{
	if (!running)
		return -1;
	if (running >= enabled) {
		*value = (double)raw;
		return 0;
	}
	*value = (double)raw * ((double)enabled / (double)running);
	return 1;
}

int counter_reading_fill(struct counter_reading *r, uint64_t raw, uint64_t enabled,
			 uint64_t running, char *why, size_t len)
{
	int e;

	if (!enabled)
		return 0;	/* never enabled: the workload did not exec */
	e = counter_scale(raw, enabled, running, &r->value);
	if (e < 0) {
		snprintf(why, len, "not counted: the PMU never scheduled it "
			 "(more events than counter registers?)");
		return -1;
	}
	r->raw = raw;
	r->time_enabled_ns = enabled;
	r->time_running_ns = running;
	r->scaled = e;
	return 1;
}

static const char *errno_name(int e)
{
	const char *s = strerrorname_np(e);
	return s ? s : "unknown error";
}

int perf_counter_probe(const struct perf_spec *ps, char *shortr, size_t slen,
		       char *detail, size_t dlen)
{
	int fd = perf_counter_open(ps, 0), e;
	char *paranoid;

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	e = -fd;
	snprintf(detail, dlen, "perf_event_open: %s", errno_name(e));
	switch (e) {
	case ENOENT:
	case EOPNOTSUPP:
	case ENODEV:
		if (ps->type == PERF_TYPE_HARDWARE) {
			struct perf_spec cyc = { PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES,
						 COUNTER_MODE_USER };
			int cfd = perf_counter_open(&cyc, 0);
			if (cfd >= 0) {
				close(cfd);
				snprintf(shortr, slen, "not supported by this CPU");
			} else {
				snprintf(shortr, slen, "no hardware PMU");
			}
		} else {
			snprintf(shortr, slen, "not supported by this kernel");
		}
		break;
	case EACCES:
	case EPERM:
		paranoid = read_line_file("/proc/sys/kernel/perf_event_paranoid");
		snprintf(shortr, slen, "not permitted");
		snprintf(detail, dlen, "perf_event_open: %s; perf_event_paranoid is %s: "
			 "counting %s needs root or CAP_PERFMON", errno_name(e),
			 paranoid ? paranoid : "unknown",
			 ps->mode == COUNTER_MODE_USER ? "other processes" : "kernel mode "
			 "(a :u suffix counts user mode only)");
		free(paranoid);
		break;
	default:
		snprintf(shortr, slen, "%s", strerror(e));
		break;
	}
	return -1;
}
