/*
 * qemu.h - the parts of the qemu backend (qemu.c) that its other files
 * share; nothing outside harness/backends/qemu*.c includes it.
 *
 *   qemu.c          the backend's row: check, enter (boot), run, leave
 *   qemu_images.c   the kernel (Debian's, fetched into the cache) and the
 *                   initramfs (the agent, busybox, the workloads)
 *   qemu_console.c  QEMU's serial console: lines in, frames out, one
 *                   request and its answer (the wire is proto.h's)
 *   qemu_lttng.c    an lttng: block's kernel events in the guest: the
 *                   modules built for its kernel, packed with the tools
 */
#ifndef PERTURB_QEMU_H
#define PERTURB_QEMU_H

#include <stddef.h>
#include <sys/types.h>

#include "backend.h"
#include "proto.h"
#include "lib/util.h"

#define QEMU_BIN "qemu-system-x86_64"
#define BUSYBOX "/bin/busybox"
/* how long the guest has to answer a request that runs nothing */
#define RESULT_MARGIN_S 30.0

struct counter_set;
struct cpio;

struct qemu {
	pid_t pid;
	int to_guest, from_guest;	/* QEMU's stdin / stdout */
	int log;			/* console log, -1 when none */
	char *log_path;
	struct strbuf in;		/* bytes read, not yet a complete line */
	int panicked;			/* the console showed a kernel panic */
	int tcg;			/* booted without KVM (emulated: slower) */
	int dead;			/* the boot failed: runs are errors */
	char dead_why[256];		/* the size of run_result.reason */
	unsigned long seq;
	/* counters: the set last sent to the guest (COUNTERS) and, for each
	 * of its counters, why the guest cannot count it (NULL: it can) */
	int counters_sent;
	struct counter_set *counting;
	char **guest_no;
	size_t n_counting;
};

/* ---- qemu.c ---- */

/*
 * res (its started time left alone) from the guest's result pr for req,
 * built as the host runner builds its own (core/result.h), then the
 * counters q asked the guest for and the tracer's accounting; v names
 * the variant in warnings.  0, or -1 with why (pr names a counter that
 * was not asked for).  The tests call it too: the same output gives the
 * same result on the host and in the guest.
 */
int qemu_guest_result(struct qemu *q, const struct variant *v, const struct run_request *req,
		      const struct proto_result *pr, struct run_result *res, char *why, size_t wlen);

/* ---- qemu_images.c ---- */

/* perturb-guest-agent next to the perturb executable. */
const char *agent_exe(void);
/* The path of Debian's kernel in the cache, fetched when missing
 * (malloc'd; NULL with the error printed). */
char *debian_kernel(void);
/* Build (or find in the cache) the initramfs for ctx, whose kernel is the
 * image at kernel; malloc'd path, or NULL with why (the study's error:
 * printed, why empty; the variant's: why filled, nothing printed). */
char *make_initramfs(struct backend_ctx *ctx, const char *kernel, char *why, size_t wlen);

/* ---- qemu_console.c ---- */

/* SIGKILL QEMU and reap it (no-op when gone). */
void qemu_kill(struct qemu *q);
/* The boot is dead: why (with the console log's path) kept for its runs,
 * warned about, QEMU killed. */
void mark_dead(struct qemu *q, const char *fmt, ...) PRINTF(2, 3);
/*
 * Read the console until a complete line containing marker or marker2
 * (may be NULL) arrives (returns 1, the line from the marker on in *line,
 * malloc'd), the deadline passes (0), QEMU's output ends or the kernel
 * panics (-1, q->panicked set), or a stop is requested (PROC_STOP).
 */
int read_line(struct qemu *q, const char *marker, const char *marker2, double deadline,
	      char **line);
/* Write all of s to the guest; 0, or -1 with errno. */
int send_line(struct qemu *q, const char *s, size_t len);
/* Encode m and write it to the guest; 0, or -1 with why. */
int send_msg(struct qemu *q, const struct proto_msg *m, char *why, size_t wlen);
/*
 * Send the encoded request line and wait until the deadline for its
 * answer: a frame of type want and sequence seq, decoded into *answer
 * (released by the caller).  Returns 1; 0 when the guest did not answer,
 * refused the request (PERTURB-ERROR) or answered garbage (why filled,
 * starting with what, or with "garbage from the guest: "); PROC_STOP.
 */
int ask_guest(struct qemu *q, const struct strbuf *request, enum proto_type want,
	      unsigned long seq, const char *what, double deadline, struct proto_msg *answer,
	      char *why, size_t wlen);

/*
 * Send a request answered by ok and a reason (KERNEL, LTTNG: want is its
 * PERTURB-KERNEL, PERTURB-LTTNG) and wait until the deadline.  1 when the
 * guest did it; 0 when it refused (why: "WHAT: " and its reason) or did
 * not answer (why filled); PROC_STOP.
 */
int ask_guest_done(struct qemu *q, const struct proto_msg *req, enum proto_type want,
		   const char *what, double deadline, char *why, size_t wlen);

/* ---- qemu_lttng.c ---- */

/* Has v an lttng: block with kernel events (traced in the guest)? */
int lttng_guest_wanted(const struct variant *v);
/* Can v's lttng: block run in its guest?  0, or -1 with why (check()). */
int lttng_guest_check(const struct variant *v, char *why, size_t len);
/* The release of a bzImage (its setup header), malloc'd; NULL when none. */
char *bzimage_release(const char *path);
/* The probe modules of lttng-modules' source tree src (NAME of
 * src/probes/lttng-probe-NAME.c) whose source or event headers name one of
 * l's tracepoints (syscall events need none): sorted, *n of them, for
 * argv_free() (NULL when none). */
char **lttng_guest_probes(const char *src, const struct lttng_spec *l, size_t *n);
/* The folder of the lttng modules v's events need, built for the kernel
 * image at kernel (holding lib/modules/RELEASE), from the cache or built
 * now (minutes); malloc'd, or NULL with why ("lttng: unavailable: ...",
 * said once). */
char *lttng_guest_modules(const struct variant *v, const char *kernel, char *why, size_t wlen);
/* Pack the modules for v and kernel, and LTTng's programs, into c; -1
 * with why. */
int lttng_guest_pack(struct cpio *c, const struct variant *v, const char *kernel, char *why,
		     size_t wlen);
/* Send the variant's LTTNG to the booted guest: 1 when the guest's tracer
 * is ready, 0 when it refused or did not answer (why filled), PROC_STOP. */
int guest_lttng(struct backend_ctx *ctx, struct qemu *q, char *why, size_t wlen);
/* LTTng's accounting of a run as its metrics (or a warning). */
void lttng_guest_result(const struct variant *v, const struct proto_result *pr,
			struct run_result *res);

#endif
