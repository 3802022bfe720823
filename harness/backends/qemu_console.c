/*
 * qemu_console.c - the qemu backend's serial console (qemu.h): QEMU's
 * stdin and stdout are a pair of pipes; every byte read is kept in the
 * console log; a line is a frame of the agent's protocol (proto.h) when it
 * holds one of its tags.  A kernel panic on the console ends the wait.
 */
#include "qemu.h"
#include "core/proc.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

void qemu_kill(struct qemu *q)
{
	if (q->pid > 0) {
		kill(q->pid, SIGKILL);
		waitpid(q->pid, NULL, 0);
		q->pid = 0;
	}
}

void mark_dead(struct qemu *q, const char *fmt, ...)
{
	va_list ap;
	char msg[224];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(q->dead_why, sizeof(q->dead_why), "%s (console log: %s)", msg,
		 q->log_path ? q->log_path : "none");
	q->dead = 1;
	warning("%s", q->dead_why);
	qemu_kill(q);
}

int read_line(struct qemu *q, const char *marker, const char *marker2, double deadline,
	      char **line)
{
	for (;;) {
		char *nl;
		while (q->in.len && (nl = memchr(q->in.buf, '\n', q->in.len))) {
			size_t n = (size_t)(nl - q->in.buf);
			char *l = xstrndup(q->in.buf, n), *m, *m2;
			memmove(q->in.buf, nl + 1, q->in.len - n - 1);
			q->in.len -= n + 1;
			q->in.buf[q->in.len] = '\0';
			if (strstr(l, "Kernel panic - not syncing")) {
				q->panicked = 1;
				free(l);
				return -1;
			}
			m = strstr(l, marker);
			if (marker2 && (m2 = strstr(l, marker2)) && (!m || m2 < m))
				m = m2;
			if (m) {
				*line = xstrdup(m);
				free(l);
				return 1;
			}
			free(l);
		}
		struct pollfd p = { .fd = q->from_guest, .events = POLLIN };
		int r = proc_poll(&p, 1, deadline, 1);
		if (r == PROC_STOP)
			return PROC_STOP;
		if (r == 0)
			return 0;
		if (r < 0)
			return -1;
		char buf[65536];
		ssize_t got = read(q->from_guest, buf, sizeof(buf));
		if (got < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (got <= 0)
			return -1;
		if (q->log >= 0 && write(q->log, buf, (size_t)got) < 0)
			q->log = -1;
		strbuf_add(&q->in, buf, (size_t)got);
	}
}

int send_line(struct qemu *q, const char *s, size_t len)
{
	while (len) {
		ssize_t w = write(q->to_guest, s, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -1;
		s += w;
		len -= (size_t)w;
	}
	return 0;
}

int send_msg(struct qemu *q, const struct proto_msg *m, char *why, size_t wlen)
{
	struct strbuf line = STRBUF_INIT;
	int ret = -1;

	if (proto_encode(m, &line, why, wlen) < 0)
		goto out;
	if (send_line(q, line.buf, line.len) < 0) {
		snprintf(why, wlen, "cannot write to QEMU: %s", strerror(errno));
		goto out;
	}
	ret = 0;
out:
	strbuf_release(&line);
	return ret;
}

int ask_guest(struct qemu *q, const struct strbuf *request, enum proto_type want,
	      unsigned long seq, const char *what, double deadline, struct proto_msg *answer,
	      char *why, size_t wlen)
{
	char *marker = xasprintf("%s ", proto_tag(want)), *line = NULL, fwhy[160];
	const char *refused = proto_tag(PROTO_ERROR);
	int r, ret = 0;

	memset(answer, 0, sizeof(*answer));
	if (send_line(q, request->buf, request->len) < 0) {
		snprintf(why, wlen, "%s: cannot write to QEMU: %s", what, strerror(errno));
		goto out;
	}
	r = read_line(q, marker, refused, deadline, &line);
	if (r == PROC_STOP) {
		ret = PROC_STOP;
	} else if (r <= 0) {
		snprintf(why, wlen, "%s: the guest %s", what, r == 0 ?
			 "stopped answering (time-out)" : q->panicked ? "died (kernel panic)" :
			 "died (QEMU exited)");
	} else if (proto_decode(line, strlen(line), answer, fwhy, sizeof(fwhy)) < 0) {
		snprintf(why, wlen, "garbage from the guest: %s", fwhy);
	} else if (answer->type == PROTO_ERROR) {
		snprintf(why, wlen, "%s: the guest refused the request: %s", what, answer->error);
	} else if (answer->type != want || answer->seq != seq) {
		snprintf(why, wlen, "garbage from the guest: %s %lu while waiting for %s %lu",
			 proto_tag(answer->type), answer->seq, proto_tag(want), seq);
	} else {
		ret = 1;
	}
	if (ret != 1)
		proto_msg_release(answer);
out:
	free(marker);
	free(line);
	return ret;
}

int ask_guest_done(struct qemu *q, const struct proto_msg *req, enum proto_type want,
		   const char *what, double deadline, char *why, size_t wlen)
{
	struct strbuf line = STRBUF_INIT;
	struct proto_msg answer;
	int ret = 0;

	if (proto_encode(req, &line, why, wlen) < 0)
		goto out;
	ret = ask_guest(q, &line, want, 0, what, deadline, &answer, why, wlen);
	if (ret != 1)
		goto out;
	if (!answer.done.ok) {
		snprintf(why, wlen, "%s: %s", what, answer.done.reason);
		ret = 0;
	}
	proto_msg_release(&answer);
out:
	strbuf_release(&line);
	return ret;
}
