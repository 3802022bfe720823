/*
 * markers.c - switching marker sites on and off, and the per-thread ring
 * buffers their probe records into (markers.h).
 *
 * Where the sites are.  Every site of a jump flavour has a descriptor in
 * section perturb_markers; JUMP_OPTIMIZED sites add {immediate byte,
 * descriptor} to perturb_marker_imms and STATIC_KEY sites {NOP address, jump
 * target, descriptor} to perturb_marker_jumps.  The linker concatenates the
 * sections of all objects and defines __start_SECTION / __stop_SECTION; the
 * references are weak so that a program without sites links.  Only the
 * executable's (or static library's) sites are seen, not those of other
 * shared objects.
 *
 * How code is patched (x86-64).  Text pages are read-only, so every patch
 * makes the page(s) of the bytes it writes PROT_READ|PROT_WRITE|PROT_EXEC
 * with mprotect(2), writes, and sets them back to PROT_READ|PROT_EXEC
 * (fails with EACCES where a W^X policy forbids it).  Other threads may be
 * executing the very bytes written, so:
 *
 *  - JUMP_OPTIMIZED changes one byte, the immediate of `movb $imm, %reg`.
 *    A one-byte store is atomic, the instruction's length and boundaries
 *    do not change, and either value is a correct instruction: a thread
 *    sees the old or the new flag, never a mix.
 *
 *  - STATIC_KEY turns `0f 1f 44 00 00` (nopl 0(%rax,%rax)) into
 *    `e9 rel32` (jmp to the probe call) and back: five bytes, more than one
 *    atomic store can promise to any thread fetching them.  The kernel's
 *    text_poke_bp() method:
 *      1. write int3 (0xcc) over byte 0;             sync all cores
 *      2. write bytes 1..4 of the new instruction;   sync
 *      3. write byte 0 of the new instruction;       sync
 *    A thread reaching the site meanwhile executes int3, never a torn
 *    instruction; our SIGTRAP handler finds the site by address and resumes
 *    the thread where the site's current state says (the jump target when
 *    enabled, the next instruction when not), which is what either the old
 *    or the new instruction would do.  "Sync" makes every thread of the
 *    process execute a serialising instruction so that none goes on with
 *    stale prefetched bytes: membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE),
 *    registered on first use; where the kernel lacks it, an mprotect that
 *    takes write permission away from a scratch page, whose TLB shootdown
 *    interrupts every CPU running the process (the return from the
 *    interrupt serialises) - best effort only.
 *
 * Patches are serialised by one mutex.  A SIGTRAP that is not at a site
 * goes to the handler installed before ours (or the default action).
 *
 * Ring buffers.  One per thread, created by the thread's first event and
 * pushed onto a lock-free list.  head is written only by the producer (with
 * release, after the event), tail only by the drainer (with release, after
 * reading); each reads the other's with acquire.  head - tail == capacity
 * means full: the event is counted in drops and lost.
 */
#include "markers.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <linux/membarrier.h>
#include <ucontext.h>
#endif

struct marker_imm {
	unsigned char *imm;
	struct perturb_marker *m;
};

struct marker_jump {
	unsigned char *code;
	unsigned char *target;
	struct perturb_marker *m;
};

extern struct perturb_marker __start_perturb_markers[] __attribute__((weak));
extern struct perturb_marker __stop_perturb_markers[] __attribute__((weak));
extern struct marker_imm __start_perturb_marker_imms[] __attribute__((weak));
extern struct marker_imm __stop_perturb_marker_imms[] __attribute__((weak));
extern struct marker_jump __start_perturb_marker_jumps[] __attribute__((weak));
extern struct marker_jump __stop_perturb_marker_jumps[] __attribute__((weak));

#define DEFAULT_CAPACITY 65536u

struct marker_ring {
	struct marker_ring *next;
	uint32_t mask;
	uint64_t head __attribute__((aligned(64)));	/* producer */
	uint64_t drops;					/* producer */
	uint64_t tail __attribute__((aligned(64)));	/* drainer */
	struct marker_event ev[] __attribute__((aligned(64)));
};

static pthread_mutex_t patch_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t drain_lock = PTHREAD_MUTEX_INITIALIZER;
static struct marker_ring *rings;	/* lock-free push, freed by markers_release */
static uint32_t capacity;		/* 0: not set yet */
static __thread struct marker_ring *my_ring;
static __thread int my_tid;

/* ---- the probe and the ring buffers ---- */

static uint32_t round_pow2(uint64_t n)
{
	uint32_t c = 2;
	while (c < n && c < (1u << 30))
		c <<= 1;
	return c;
}

static uint32_t get_capacity(void)
{
	uint32_t c = __atomic_load_n(&capacity, __ATOMIC_RELAXED);
	if (!c) {
		const char *e = getenv("PERTURB_MARKER_BUFFER");
		unsigned long long v = e ? strtoull(e, NULL, 10) : 0;
		c = round_pow2(v ? v : DEFAULT_CAPACITY);
		__atomic_store_n(&capacity, c, __ATOMIC_RELAXED);
	}
	return c;
}

void markers_set_capacity(uint32_t events)
{
	__atomic_store_n(&capacity, round_pow2(events), __ATOMIC_RELAXED);
}

static struct marker_ring *ring_new(void)
{
	uint32_t cap = get_capacity();
	struct marker_ring *r;
	if (posix_memalign((void **)&r, 64, sizeof(*r) + (size_t)cap * sizeof(r->ev[0])))
		return NULL;
	memset(r, 0, sizeof(*r));
	r->mask = cap - 1;
	r->next = __atomic_load_n(&rings, __ATOMIC_RELAXED);
	while (!__atomic_compare_exchange_n(&rings, &r->next, r, 0,
					    __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		;
	return r;
}

static inline uint64_t timestamp(void)
{
#if defined(__x86_64__) || defined(__i386__)
	uint32_t lo, hi;
	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
#else
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
#endif
}

void perturb_marker_hit(struct perturb_marker *m, int nargs, long a0, long a1)
{
	struct marker_ring *r = my_ring;
	struct marker_event *e;
	uint64_t h, t;

	if (__builtin_expect(!r, 0)) {
		if (!(r = my_ring = ring_new()))
			return;
		my_tid = (int)syscall(SYS_gettid);
	}
	h = r->head;
	t = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
	if (h - t > r->mask) {
		__atomic_store_n(&r->drops, r->drops + 1, __ATOMIC_RELAXED);
		return;
	}
	e = &r->ev[h & r->mask];
	e->ts = timestamp();
	e->site = (uint32_t)(m - __start_perturb_markers);
	e->nargs = (uint32_t)nargs;
	e->args[0] = a0;
	e->args[1] = a1;
	e->tid = my_tid;
	e->pad = 0;
	__atomic_store_n(&r->head, h + 1, __ATOMIC_RELEASE);
}

int64_t markers_drain(int (*fn)(const struct marker_event *ev, void *arg), void *arg)
{
	int64_t n = 0;
	pthread_mutex_lock(&drain_lock);
	for (struct marker_ring *r = __atomic_load_n(&rings, __ATOMIC_ACQUIRE); r; r = r->next) {
		uint64_t t = r->tail;
		uint64_t h = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
		for (; t != h; t++, n++) {
			int ret = fn(&r->ev[t & r->mask], arg);
			if (ret < 0) {
				__atomic_store_n(&r->tail, t + 1, __ATOMIC_RELEASE);
				n = ret;
				goto out;
			}
		}
		__atomic_store_n(&r->tail, t, __ATOMIC_RELEASE);
	}
out:
	pthread_mutex_unlock(&drain_lock);
	return n;
}

struct write_ctx {
	FILE *out;
	enum markers_format format;
};

static int write_one(const struct marker_event *e, void *arg)
{
	struct write_ctx *w = arg;
	if (w->format == MARKERS_BINARY)
		return fwrite(e, sizeof(*e), 1, w->out) == 1 ? 0 : -1;
	fprintf(w->out, "%llu %d %s", (unsigned long long)e->ts, e->tid,
		markers_site_name(e->site) ? markers_site_name(e->site) : "?");
	for (uint32_t i = 0; i < e->nargs && i < 2; i++)
		fprintf(w->out, " %lld", (long long)e->args[i]);
	return fputc('\n', w->out) == EOF ? -1 : 0;
}

int64_t markers_write(FILE *out, enum markers_format format)
{
	struct write_ctx w = { out, format };
	int64_t n = markers_drain(write_one, &w);
	if (n < 0 || fflush(out) || ferror(out)) {
		fprintf(stderr, "perturb: error: cannot write marker events: %s\n", strerror(errno));
		return -1;
	}
	return n;
}

uint64_t markers_drops(void)
{
	uint64_t d = 0;
	for (struct marker_ring *r = __atomic_load_n(&rings, __ATOMIC_ACQUIRE); r; r = r->next)
		d += __atomic_load_n(&r->drops, __ATOMIC_RELAXED);
	return d;
}

void markers_release(void)
{
	pthread_mutex_lock(&drain_lock);
	struct marker_ring *r = __atomic_exchange_n(&rings, NULL, __ATOMIC_ACQ_REL);
	while (r) {
		struct marker_ring *next = r->next;
		free(r);
		r = next;
	}
	my_ring = NULL;
	pthread_mutex_unlock(&drain_lock);
}

const char *markers_site_name(uint32_t id)
{
	if (!__start_perturb_markers || id >= (size_t)(__stop_perturb_markers - __start_perturb_markers))
		return NULL;
	return __start_perturb_markers[id].name;
}

/* ---- patching ---- */

#if defined(__x86_64__)

static const unsigned char nop5[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };
static int sync_mode;		/* 0: not set up, 1: membarrier, 2: mprotect */
static void *scratch_page;
static struct sigaction old_trap;

static long membarrier(int cmd)
{
	return syscall(SYS_membarrier, cmd, 0, 0);
}

/* Every thread of the process executes a serialising instruction. */
static void sync_cores(void)
{
	if (sync_mode == 1) {
		membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE);
		return;
	}
	if (scratch_page) {
		mprotect(scratch_page, (size_t)sysconf(_SC_PAGESIZE), PROT_READ | PROT_WRITE);
		*(volatile char *)scratch_page = 1;
		mprotect(scratch_page, (size_t)sysconf(_SC_PAGESIZE), PROT_READ);
	}
	__sync_synchronize();
}

static struct marker_jump *find_jump(const unsigned char *code)
{
	for (struct marker_jump *j = __start_perturb_marker_jumps; j < __stop_perturb_marker_jumps; j++)
		if (j->code == code)
			return j;
	return NULL;
}

/* int3 at a site being patched: go on as the site's state says. */
static void trap_handler(int sig, siginfo_t *si, void *uctx)
{
	ucontext_t *uc = uctx;
	unsigned char *ip = (unsigned char *)uc->uc_mcontext.gregs[REG_RIP];
	struct marker_jump *j = find_jump(ip - 1);

	if (j) {
		int on = __atomic_load_n(&j->m->enabled, __ATOMIC_ACQUIRE);
		uc->uc_mcontext.gregs[REG_RIP] = (greg_t)(on ? j->target : j->code + 5);
		return;
	}
	if (old_trap.sa_flags & SA_SIGINFO) {
		old_trap.sa_sigaction(sig, si, uctx);
	} else if (old_trap.sa_handler != SIG_IGN && old_trap.sa_handler != SIG_DFL) {
		old_trap.sa_handler(sig);
	} else {
		signal(SIGTRAP, SIG_DFL);
		raise(SIGTRAP);
	}
}

static int patch_setup(void)
{
	struct sigaction sa;

	if (sync_mode)
		return 0;
	if (!membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE)) {
		sync_mode = 1;
	} else {
		sync_mode = 2;
		scratch_page = mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ,
				    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (scratch_page == MAP_FAILED)
			scratch_page = NULL;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = trap_handler;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGTRAP, &sa, &old_trap) < 0)
		return -errno;
	return 0;
}

/* mprotect the pages of [p, p + len) to prot. */
static int protect(void *p, size_t len, int prot)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t a = (uintptr_t)p & ~(page - 1);
	uintptr_t b = ((uintptr_t)p + len + page - 1) & ~(page - 1);
	return mprotect((void *)a, b - a, prot) < 0 ? -errno : 0;
}

static int poke_imm(struct marker_imm *im, int on)
{
	int ret = protect(im->imm, 1, PROT_READ | PROT_WRITE | PROT_EXEC);
	if (ret < 0)
		return ret;
	__atomic_store_n(im->imm, (unsigned char)!!on, __ATOMIC_RELEASE);
	protect(im->imm, 1, PROT_READ | PROT_EXEC);
	sync_cores();
	return 0;
}

static int poke_jump(struct marker_jump *j, int on)
{
	unsigned char want[5], *c = j->code;
	int32_t rel;
	int ret;

	if (on) {
		rel = (int32_t)(j->target - (c + 5));
		want[0] = 0xe9;
		memcpy(want + 1, &rel, 4);
	} else {
		memcpy(want, nop5, 5);
	}
	if (!memcmp(c, want, 5))
		return 0;
	if ((ret = protect(c, 5, PROT_READ | PROT_WRITE | PROT_EXEC)) < 0)
		return ret;
	__atomic_store_n(c, 0xcc, __ATOMIC_RELEASE);
	sync_cores();
	for (int i = 1; i < 5; i++)
		__atomic_store_n(c + i, want[i], __ATOMIC_RELAXED);
	sync_cores();
	__atomic_store_n(c, want[0], __ATOMIC_RELEASE);
	sync_cores();
	protect(c, 5, PROT_READ | PROT_EXEC);
	return 0;
}

#endif

static int matches(const struct perturb_marker *m, const char *name)
{
	return !name || !strcmp(name, "all") || (m->name && !strcmp(m->name, name));
}

static int set_state(const char *name, int on)
{
	int n = 0, ret = 0;

	pthread_mutex_lock(&patch_lock);
	for (struct perturb_marker *m = __start_perturb_markers; m < __stop_perturb_markers; m++) {
		if (!matches(m, name))
			continue;
		__atomic_store_n(&m->enabled, on, __ATOMIC_RELEASE);
		n++;
	}
#if defined(__x86_64__)
	if (n && (&__start_perturb_marker_imms[0] != &__stop_perturb_marker_imms[0] ||
		  &__start_perturb_marker_jumps[0] != &__stop_perturb_marker_jumps[0]) &&
	    (ret = patch_setup()) < 0)
		goto out;
	for (struct marker_imm *im = __start_perturb_marker_imms; im < __stop_perturb_marker_imms; im++)
		if (matches(im->m, name) && (ret = poke_imm(im, on)) < 0)
			goto out;
	for (struct marker_jump *j = __start_perturb_marker_jumps; j < __stop_perturb_marker_jumps; j++)
		if (matches(j->m, name) && (ret = poke_jump(j, on)) < 0)
			goto out;
out:
#endif
	pthread_mutex_unlock(&patch_lock);
	return ret < 0 ? ret : n;
}

int markers_enable(const char *name)
{
	return set_state(name, 1);
}

int markers_disable(const char *name)
{
	return set_state(name, 0);
}
