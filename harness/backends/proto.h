/*
 * proto.h - the wire protocol between perturb and its guest agent: framing,
 * checksum and every message in both directions, encoded and decoded here
 * and nowhere else.  Linked by perturb (the qemu backend, qemu.c) and by
 * the static guest agent (guest/agent.c); a future remote backend reuses
 * it and the agent unchanged.
 *
 * The guest's serial console carries lines.  Every message is one frame,
 * one line:
 *
 *   TAG SEQ LEN CRC32 HEX\n
 *
 * TAG names the message (below); SEQ is the run's sequence number for RUN
 * and its RESULT, 0 otherwise; LEN the payload's length in bytes (at most
 * PROTO_PAYLOAD_MAX); CRC32 zlib's crc32() of the payload, 8 lower-case
 * hex digits; HEX the payload, two lower-case hex digits a byte.  A line
 * of the console that holds a frame may begin with other text (the kernel's
 * messages): the frame starts at its tag.
 *
 * A payload is a sequence of fields, each a netstring: the decimal length,
 * ':', the bytes, ','.  A number is the netstring of its decimal text
 * (an optional '-', digits, nothing else).  A list is its count (a number,
 * -1 for a list the request leaves out) then its items.  A string of a
 * request is at most PROTO_FIELD_MAX bytes and holds no NUL byte; a list
 * has at most PROTO_LIST_MAX items; a result's stdout and stderr are at
 * most PROTO_OUTPUT_MAX bytes each (their tails) and may hold any byte.
 *
 *   guest -> host  PERTURB-READY     release: the guest kernel's release
 *   host -> guest  KERNEL            a kernel: block (struct proto_kernel),
 *                                    only right after PERTURB-READY
 *   guest -> host  PERTURB-KERNEL    ok (1: applied, 0: refused), reason
 *   host -> guest  COUNTERS          the names of the counters every later
 *                                    RUN counts (n = 0: none)
 *   guest -> host  PERTURB-COUNTERS  one item per name, in order: "" when
 *                                    the guest can count it, else the
 *                                    reason why not (never "")
 *   host -> guest  RUN               seq, timeout_ms, cwd, env, argv
 *   guest -> host  PERTURB-RESULT    seq, how the run ended, times, stdout,
 *                                    stderr, tracer accounting, counters
 *                                    (struct proto_result)
 *   guest -> host  PERTURB-ERROR     reason: a request the agent could not
 *                                    decode (its SEQ when known, else 0)
 *   host -> guest  QUIT              (no fields) the agent syncs and
 *                                    powers off
 *   host -> guest  LTTNG             an lttng: block's kernel part (struct
 *                                    proto_lttng), after KERNEL if any and
 *                                    before the first RUN
 *   guest -> host  PERTURB-LTTNG     ok (1: the tracer is ready, 0: not),
 *                                    reason (as PERTURB-KERNEL)
 *
 * A RESULT after an LTTNG that succeeded ends with LTTng's accounting of
 * the run: its status (a number, enum proto_trace), then events recorded,
 * discarded, packets lost and bytes (four numbers), or the reason they
 * could not be read.  Without LTTNG the result ends after its counters, as
 * before the field existed: a result without it decodes as PROTO_TRACE_NONE.
 *
 * Decoding is a pure function over a byte buffer (proto_decode()): it
 * never reads past the length it is given, accepts nothing but a whole
 * well-formed frame whose checksum matches and whose fields respect the
 * limits, and says why otherwise.
 */
#ifndef PERTURB_PROTO_H
#define PERTURB_PROTO_H

#include <stddef.h>
#include <stdint.h>
#include "lib/util.h"

#define PROTO_PAYLOAD_MAX (512 * 1024)
/* the longest line a frame makes, '\n' included */
#define PROTO_LINE_MAX (2 * PROTO_PAYLOAD_MAX + 128)
#define PROTO_FIELD_MAX (64 * 1024)
#define PROTO_OUTPUT_MAX (64 * 1024)
#define PROTO_LIST_MAX 4096

enum proto_type {
	PROTO_READY,
	PROTO_KERNEL,
	PROTO_KERNEL_DONE,
	PROTO_COUNTERS,
	PROTO_COUNTERS_DONE,
	PROTO_RUN,
	PROTO_RESULT,
	PROTO_ERROR,
	PROTO_QUIT,
	PROTO_LTTNG,
	PROTO_LTTNG_DONE,
};
/* "PERTURB-RESULT", ... (the frame's tag) */
const char *proto_tag(enum proto_type t);

/* A list of strings; v NULL: left out (n = 0), else v[n] is NULL. */
struct proto_list {
	char **v;
	size_t n;
};

/* A kernel: block as the guest applies it: the fields of
 * instrumentation/tracefs.c's request, "left out" kept apart from empty. */
struct proto_kernel {
	int tracing_on;		/* 0 or 1; -1: left out */
	long buffer_size_kb;	/* > 0; -1: left out */
	char *tracer;		/* NULL: left out */
	struct proto_list events, functions, options;
};

/* An lttng: block's kernel part, as the guest agent sets it up. */
struct proto_lttng {
	struct proto_list events;	/* tracepoint, "syscall:NAME" or "syscalls"; n >= 1 */
	uint64_t subbuf_size;		/* bytes; 0: LTTng's default */
	long subbuf_count;		/* 0: LTTng's default */
	int overwrite;			/* 0 or 1 */
};

struct proto_run {
	long long timeout_ms;	/* > 0 */
	char *cwd;		/* "" for the agent's own */
	struct proto_list env;	/* "KEY=VALUE" items: the whole environment */
	struct proto_list argv;	/* n >= 1 */
};

enum proto_end {
	PROTO_END_EXIT,		/* code: the exit status */
	PROTO_END_SIGNAL,	/* code: the signal */
	PROTO_END_TIMEOUT,	/* killed by the agent after timeout_ms */
	PROTO_END_ERROR,	/* not run: err holds the reason */
};

enum proto_trace {
	PROTO_TRACE_NONE,	/* no kernel: block applied */
	PROTO_TRACE_STATS,	/* the tracer's accounting during the run */
	PROTO_TRACE_ERROR,	/* it could not be read: trace_error */
};

/* Counter index of the COUNTERS list (only those the guest can count). */
struct proto_count {
	size_t index;
	char *why;		/* NULL: counted, raw/enabled/running as read */
	uint64_t raw, enabled_ns, running_ns;
};

struct proto_result {
	enum proto_end end;
	int code;
	int64_t wall_ns, user_us, sys_us;
	long maxrss_kb;
	char *out, *err;	/* bytes, may hold NULs; a NUL follows each when decoded */
	size_t out_len, err_len;
	enum proto_trace trace;
	uint64_t trace_events, trace_lost, trace_bytes;
	char *trace_error;	/* PROTO_TRACE_ERROR */
	struct proto_count *counts;
	size_t n_counts;
	/* LTTng's accounting of the run (after an LTTNG that succeeded) */
	enum proto_trace lttng;
	uint64_t lttng_events, lttng_discarded, lttng_lost, lttng_bytes;
	char *lttng_error;	/* PROTO_TRACE_ERROR */
};

struct proto_msg {
	enum proto_type type;
	unsigned long seq;
	union {
		char *release;			/* READY */
		struct proto_kernel kernel;	/* KERNEL */
		struct proto_lttng lttng;	/* LTTNG */
		struct {			/* KERNEL_DONE, LTTNG_DONE */
			int ok;
			char *reason;		/* "" when ok */
		} done;
		struct proto_list counters;	/* COUNTERS: names; COUNTERS_DONE: reasons */
		struct proto_run run;		/* RUN */
		struct proto_result result;	/* RESULT */
		char *error;			/* ERROR */
	};
};

/*
 * Append m's frame, '\n' included, to line.  0, or -1 with why when a
 * field breaks a limit above (nothing appended): a request that cannot
 * be carried whole is refused here, not cut.  Pointers of m may be NULL
 * for "" or an empty list.
 */
int proto_encode(const struct proto_msg *m, struct strbuf *line, char *why, size_t wlen);

/*
 * Decode the frame in buf[0..len) (its tag first, without the '\n'; no
 * NUL needed) into *m (malloc'd fields, released with proto_msg_release()).
 * 0, or -1 with why ("result frame fails its checksum", "malformed run
 * message: ..."), *m then empty.  Never reads outside buf.
 */
int proto_decode(const void *buf, size_t len, struct proto_msg *m, char *why, size_t wlen);

/* Free what proto_decode() allocated in m; m zeroed. */
void proto_msg_release(struct proto_msg *m);

#endif
