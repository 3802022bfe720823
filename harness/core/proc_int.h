/*
 * proc_int.h - what the files of proc.h share: proc.c (waiting, captured
 * output, commands), proc_spawn.c (starting a child), proc_daemon.c
 * (daemons and background loads).  Private to proc*.c.
 */
#ifndef PERTURB_PROC_INT_H
#define PERTURB_PROC_INT_H

#include <errno.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/*
 * AddressSanitizer and a child on a stack of its own: ASan does not know
 * that stack, so the child-side functions are not instrumented (no
 * redzones left poisoned by frames that never return, no
 * __asan_handle_no_return on an unknown stack), and the stack's shadow is
 * cleared before each use all the same.
 */
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define CHILD_SIDE __attribute__((no_sanitize_address))
#define UNPOISON_STACK(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define CHILD_SIDE
#define UNPOISON_STACK(p, n) ((void)(p), (void)(n))
#endif

/* Close *fd unless it is -1, and make it -1. */
static inline void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* read(2) until len bytes or EOF (EINTR retried): the bytes read, -1 on
 * error. */
static inline ssize_t read_full(int fd, void *buf, size_t len)
{
	size_t got = 0;
	while (got < len) {
		ssize_t n = read(fd, (char *)buf + got, len - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (!n)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

/* write(2) all of buf (EINTR retried), as far as it goes; safe in a
 * child on a stack of its own. */
CHILD_SIDE static inline void write_full(int fd, const void *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		buf = (const char *)buf + n;
		len -= (size_t)n;
	}
}

/* waitpid(pid) (EINTR retried); its wait status into *status unless NULL. */
static inline pid_t reap(pid_t pid, int *status)
{
	pid_t r;
	int st = 0;
	do
		r = waitpid(pid, &st, 0);
	while (r < 0 && errno == EINTR);
	if (status)
		*status = st;
	return r;
}

/*
 * Print the last lines of fd from offset `from` on (at most the last
 * 4 KiB), indented, on stderr.
 */
void proc_print_tail(int fd, off_t from);

/* fd is the /dev/null proc_spawn_reason() keeps for children's stdin. */
int proc_spawn_kept_fd(int fd);

#endif
