/*
 * mounts.c - a private mount namespace: made (unshare_mounts_private())
 * or tried in a child (private_mounts_unavailable()); see util.h.  Apart
 * from util.c, which it shares util.h with, to keep util.c by job.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "util.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

int unshare_mounts_private(const char *const *paths)
{
	if (unshare(CLONE_NEWNS) < 0)
		return -1;
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0)
		return 0;
	if (errno != EINVAL)
		return -1;
	for (; *paths; paths++)
		if (mount(NULL, *paths, NULL, MS_REC | MS_PRIVATE, NULL) < 0)
			return -1;
	return 0;
}

/* write() of a string (the child of a fork of a threaded process). */
static void write_str(int fd, const char *s)
{
	if (write(fd, s, strlen(s)) < 0)
		_exit(2);
}

/* The child of private_mounts_unavailable(): unshare_mounts_private()'s
 * steps, what failed written on fd; exit 0 when none did. */
_Noreturn static void try_private_mounts(const char *const *paths, int fd)
{
	if (unshare(CLONE_NEWNS) < 0) {
		write_str(fd, errno == EPERM ? "unshare(CLONE_NEWNS): not permitted" :
			  "unshare(CLONE_NEWNS) failed");
		_exit(1);
	}
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0)
		_exit(0);
	if (errno != EINVAL) {
		write_str(fd, "mount --make-rprivate / failed");
		_exit(1);
	}
	for (; *paths; paths++)
		if (mount(NULL, *paths, NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
			write_str(fd, "'/' and '");
			write_str(fd, *paths);
			write_str(fd, "' are no mount points (mount: ");
			write_str(fd, *paths);
			write_str(fd, ": not mount point; a chroot: mount a tmpfs or the host's "
				  "folder there)");
			_exit(1);
		}
	_exit(0);
}

int private_mounts_unavailable(const char *const *paths, char *why, size_t len)
{
	char buf[512];
	int p[2], status = 0;
	ssize_t n = 0, k;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0 || (pid = fork()) < 0) {
		snprintf(why, len, "cannot try a mount namespace: %s", strerror(errno));
		return 1;
	}
	if (!pid) {
		close(p[0]);
		try_private_mounts(paths, p[1]);
	}
	close(p[1]);
	while (n < (ssize_t)sizeof(buf) - 1) {
		k = read(p[0], buf + n, sizeof(buf) - 1 - (size_t)n);
		if (k > 0)
			n += k;
		else if (k == 0 || errno != EINTR)
			break;
	}
	buf[n] = '\0';
	close(p[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	snprintf(why, len, "no private mount namespace here: %s", n ? buf :
		 "the trial ended abnormally");
	return 1;
}
