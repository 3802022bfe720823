/*
 * memory.c - memory micro-benchmarks: page-fault, mmap, memcpy-4096 and
 * empty-loop (the two loops of the 2006 Linux Kernel Markers measurements).
 */
#include "micro.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* ---- page-fault: first touch of a fresh anonymous page ---- */

#define PF_REGION (4UL << 20)	/* pages are taken from 4 MiB regions */

struct pf_state {
	char *base;
	size_t off, page;
};

static int pf_map(struct pf_state *s)
{
	s->base = mmap(NULL, PF_REGION, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (s->base == MAP_FAILED) {
		s->base = NULL;
		return micro_error("mmap: %s", strerror(errno));
	}
	/* One fault per 4 KiB page, never a transparent huge page. */
	madvise(s->base, PF_REGION, MADV_NOHUGEPAGE);
	s->off = 0;
	return 0;
}

static int pf_setup(struct micro_ctx *m)
{
	struct pf_state *s = calloc(1, sizeof(*s));
	if (!s)
		return micro_error("out of memory");
	m->priv = s;
	s->page = (size_t)sysconf(_SC_PAGESIZE);
	return pf_map(s);
}

/* Writes one byte to the next untouched page; when a region is used up it
 * is unmapped and a new one mapped, so the result includes 1/1024 of the
 * map and unmap of a region (and the freeing of the page itself, which
 * any program that faults a page in pays too). */
static int pf_op(struct micro_ctx *m)
{
	struct pf_state *s = m->priv;
	if (s->off >= PF_REGION) {
		munmap(s->base, PF_REGION);
		if (pf_map(s) < 0)
			return -1;
	}
	*(volatile char *)(s->base + s->off) = 1;
	s->off += s->page;
	return 0;
}

static void pf_teardown(struct micro_ctx *m)
{
	struct pf_state *s = m->priv;
	if (s && s->base)
		munmap(s->base, PF_REGION);
	free(s);
	m->priv = NULL;
}

const struct micro_info micro_page_fault = {
	.name = "page-fault",
	.help = "first write to a fresh anonymous 4 KiB page (minor fault, zeroed page)",
	.setup = pf_setup,
	.op = pf_op,
	.teardown = pf_teardown,
};

/* ---- mmap: map and unmap an untouched anonymous region ---- */

#define MMAP_SIZE (64UL << 10)

static int mmap_op(struct micro_ctx *m)
{
	(void)m;
	void *p = mmap(NULL, MMAP_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return micro_error("mmap: %s", strerror(errno));
	if (munmap(p, MMAP_SIZE) < 0)
		return micro_error("munmap: %s", strerror(errno));
	return 0;
}

const struct micro_info micro_mmap = {
	.name = "mmap",
	.help = "mmap(2) of a 64 KiB anonymous region, untouched, and munmap(2)",
	.op = mmap_op,
};

/* ---- memcpy-4096: the Markers' memcpy loop ---- */

static char memcpy_src[4096] __attribute__((aligned(64)));
static char memcpy_dst[4096] __attribute__((aligned(64)));

static int memcpy_setup(struct micro_ctx *m)
{
	(void)m;
	memset(memcpy_src, 0x5a, sizeof(memcpy_src));
	memset(memcpy_dst, 0, sizeof(memcpy_dst));
	return 0;
}

static int memcpy_op(struct micro_ctx *m)
{
	(void)m;
	memcpy(memcpy_dst, memcpy_src, sizeof(memcpy_dst));
	micro_consume(memcpy_dst);
	return 0;
}

const struct micro_info micro_memcpy_4096 = {
	.name = "memcpy-4096",
	.help = "memcpy(3) of 4096 bytes between two cache-hot buffers",
	.setup = memcpy_setup,
	.op = memcpy_op,
};

/* ---- empty-loop: the Markers' empty loop ---- */

/*
 * Nothing but a compiler barrier (so the call cannot be dropped): the same
 * body as the framework's reference operation.  Its ns_per_op is therefore
 * about 0, with the noise of the subtraction as its spread - the check that
 * the subtraction works - and loop_ns_per_call / loop_tsc_cycles_per_call
 * give the loop's own cost, the Markers' "cycles per loop".  Code placed in
 * this function (a marker, a probe) shows up in ns_per_op as its added cost.
 */
static int empty_loop_op(struct micro_ctx *m)
{
	(void)m;
	__asm__ __volatile__("" : : : "memory");
	return 0;
}

const struct micro_info micro_empty_loop = {
	.name = "empty-loop",
	.help = "one iteration of an empty loop (a compiler barrier); about 0 once the loop is subtracted",
	.op = empty_loop_op,
};
