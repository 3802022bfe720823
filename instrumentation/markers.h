/*
 * markers.h - user-space instrumentation markers, after the 2006 Linux
 * Kernel Markers, and the per-thread ring buffers their probe records into.
 *
 * A marker site:
 *
 *	PERTURB_MARKER("subsys_event", "fd %ld len %ld", fd, len);
 *
 * names a place in the code (the name need not be unique: markers_enable()
 * switches every site of that name), a format describing the arguments
 * (documentation only: it is kept with the site, not interpreted) and up to
 * two integer arguments (each converted to long).  What the site compiles
 * to is chosen when it is compiled, by the macro PERTURB_MARKER_FLAVOUR
 * (default JUMP_GENERIC), or by naming the flavour's own macro:
 *
 *   NONE            PERTURB_MARKER_NONE: nothing; the arguments are not
 *                   evaluated.  The baseline.
 *   NOP             PERTURB_MARKER_NOP: 5 bytes of NOP (0f 1f 44 00 00),
 *                   no call, never enabled: the cost of the padding alone.
 *   JUMP_GENERIC    a load of the site's enable flag from memory (volatile),
 *                   a test and a jump over the call of the probe.
 *   JUMP_OPTIMIZED  the 2006 "immediate value": the flag is the immediate
 *                   operand of a `movb $0, %reg` in the instruction stream
 *                   (its address recorded in section perturb_marker_imms);
 *                   enabling rewrites that one byte.  No data cache line is
 *                   loaded.
 *   STATIC_KEY      asm goto: a 5-byte NOP that enabling patches into a
 *                   `jmp rel32` to the call, as the kernel's jump labels
 *                   (site address, target and descriptor recorded in
 *                   section perturb_marker_jumps).
 *
 * JUMP_OPTIMIZED and STATIC_KEY need x86-64; elsewhere they compile to
 * JUMP_GENERIC, and NOP to a single nop instruction.  The same translation
 * unit may hold several flavours: PERTURB_MARKER expands the flavour that
 * PERTURB_MARKER_FLAVOUR names where it is expanded, so redefining it
 * between functions is allowed.
 *
 * An enabled site calls perturb_marker_hit(), which appends one event
 * (timestamp, site id, arguments) to the calling thread's ring buffer:
 * single producer (the thread), lock-free, never blocking; an event that
 * finds the buffer full is counted as a drop and lost.  Any thread can
 * drain every buffer (markers_drain, markers_write).
 *
 * How code is patched safely is described in markers.c.
 */
#ifndef PERTURB_MARKERS_H
#define PERTURB_MARKERS_H

#include <stdint.h>
#include <stdio.h>

/*
 * One site's descriptor, in section perturb_markers (one per expansion of
 * a site macro of the jump flavours; NONE and NOP have none).  The section
 * is read as an array, so every descriptor must sit at the same stride:
 * aligned(32) makes the size 32, which is also the alignment GCC gives
 * static objects of 32 bytes and more on x86-64.
 */
struct perturb_marker {
	const char *name;
	const char *fmt;
	volatile int enabled;	/* JUMP_GENERIC's flag; the state for all */
	int flavour;		/* enum markers_flavour */
} __attribute__((aligned(32)));

enum markers_flavour {
	MARKERS_NONE,
	MARKERS_NOP,
	MARKERS_JUMP_GENERIC,
	MARKERS_JUMP_OPTIMIZED,
	MARKERS_STATIC_KEY,
};

/* One recorded event. */
struct marker_event {
	uint64_t ts;		/* rdtsc on x86, else CLOCK_MONOTONIC ns */
	uint32_t site;		/* index of the site's descriptor (markers_site_name) */
	uint32_t nargs;		/* 0..2 */
	int64_t args[2];
	int32_t tid;		/* the recording thread */
	uint32_t pad;
};

/* The probe an enabled site calls (not for direct use). */
void perturb_marker_hit(struct perturb_marker *m, int nargs, long a0, long a1);

/*
 * Switch the sites named name (every site if name is NULL or "all") on or
 * off.  Returns how many descriptors matched (0 when none did; NONE and NOP
 * sites have no descriptor and never record), or a negative errno when code
 * could not be patched (mprotect refused: EACCES under a W^X policy).
 * Thread-safe; other threads may run the sites meanwhile.
 */
int markers_enable(const char *name);
int markers_disable(const char *name);

/* The name of site id, or NULL. */
const char *markers_site_name(uint32_t id);

/*
 * Events a thread's ring buffer holds, rounded up to a power of two (at
 * least 2); applies to buffers created afterwards (a thread's buffer is
 * created by its first recorded event).  Default 65536, or the environment
 * variable PERTURB_MARKER_BUFFER.
 */
void markers_set_capacity(uint32_t events);

/*
 * Drain every thread's buffer: fn is called for each event, oldest first
 * per thread.  Returns the number of events drained, or fn's negative
 * return value (the events up to that one are consumed).  Safe against
 * the producers; one drainer at a time (serialised internally).
 */
int64_t markers_drain(int (*fn)(const struct marker_event *ev, void *arg), void *arg);

enum markers_format {
	MARKERS_TEXT,		/* "ts tid site-name arg0 arg1" a line */
	MARKERS_BINARY,		/* struct marker_event records, host order */
};

/* Drain into out; returns events written or -1 after error(). */
int64_t markers_write(FILE *out, enum markers_format format);

/* Events lost to full buffers so far, all threads. */
uint64_t markers_drops(void);

/*
 * Free every ring buffer.  Only when no thread records any more (the
 * recording threads have exited or will not hit a site again); the calling
 * thread gets a new buffer on its next event.
 */
void markers_release(void);

/* ---- the site macros ---- */

#define PM_CAT_(a, b) a##b
#define PM_CAT(a, b) PM_CAT_(a, b)
#define PM_N_(z, a, b, n, ...) n
#define PM_A0_(z, a, ...) a
#define PM_A1_(z, a, b, ...) b
/* Called with (name, fmt, ...): the count and the two arguments (0 when absent). */
#define PM_CALL(d, ...) perturb_marker_hit(&(d), PM_N_(0, ##__VA_ARGS__, 2, 1, 0), \
	(long)(PM_A0_(0, ##__VA_ARGS__, 0, 0)), (long)(PM_A1_(0, ##__VA_ARGS__, 0, 0, 0)))

#define PM_DESC(var, name, fmt, fl)					\
	static struct perturb_marker var				\
	__attribute__((section("perturb_markers"), used)) = { name, fmt, 0, fl }

#ifndef PERTURB_MARKER_FLAVOUR
#define PERTURB_MARKER_FLAVOUR JUMP_GENERIC
#endif

#define PERTURB_MARKER(name, fmt, ...)					\
	PM_CAT(PERTURB_MARKER_, PERTURB_MARKER_FLAVOUR)(name, fmt, ##__VA_ARGS__)

#define PERTURB_MARKER_NONE(name, fmt, ...) do { } while (0)

#define PERTURB_MARKER_JUMP_GENERIC(name, fmt, ...) do {		\
	PM_DESC(pm_d, name, fmt, MARKERS_JUMP_GENERIC);			\
	if (__builtin_expect(pm_d.enabled, 0))				\
		PM_CALL(pm_d, ##__VA_ARGS__);				\
} while (0)

#if defined(__x86_64__)

#define PERTURB_MARKER_NOP(name, fmt, ...)				\
	__asm__ __volatile__(".byte 0x0f,0x1f,0x44,0x00,0x00")

/* Label 2 follows the mov, whose last byte is its immediate. */
#define PERTURB_MARKER_JUMP_OPTIMIZED(name, fmt, ...) do {		\
	PM_DESC(pm_d, name, fmt, MARKERS_JUMP_OPTIMIZED);		\
	unsigned char pm_v;						\
	__asm__ __volatile__("movb $0, %0\n2:\n\t"			\
		".pushsection perturb_marker_imms, \"aw\"\n\t"		\
		".balign 8\n\t"						\
		".quad 2b - 1, %c1\n\t"					\
		".popsection"						\
		: "=q"(pm_v) : "i"(&pm_d));				\
	if (__builtin_expect(pm_v, 0))					\
		PM_CALL(pm_d, ##__VA_ARGS__);				\
} while (0)

#define PERTURB_MARKER_STATIC_KEY(name, fmt, ...) do {		\
	__label__ pm_on;						\
	PM_DESC(pm_d, name, fmt, MARKERS_STATIC_KEY);			\
	__asm__ goto("1: .byte 0x0f,0x1f,0x44,0x00,0x00\n\t"		\
		".pushsection perturb_marker_jumps, \"aw\"\n\t"		\
		".balign 8\n\t"						\
		".quad 1b, %l[pm_on], %c0\n\t"				\
		".popsection"						\
		: : "i"(&pm_d) : : pm_on);				\
	break;								\
pm_on: __attribute__((cold));						\
	PM_CALL(pm_d, ##__VA_ARGS__);					\
} while (0)

#else	/* not x86-64: the jump flavours fall back to the memory flag */

#define PERTURB_MARKER_NOP(name, fmt, ...) __asm__ __volatile__("nop")
#define PERTURB_MARKER_JUMP_OPTIMIZED PERTURB_MARKER_JUMP_GENERIC
#define PERTURB_MARKER_STATIC_KEY PERTURB_MARKER_JUMP_GENERIC

#endif

#endif
