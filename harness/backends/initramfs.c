/* initramfs.c - newc cpio archives; see initramfs.h */
#include "initramfs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void cpio_init(struct cpio *c)
{
	memset(c, 0, sizeof(*c));
	strbuf_add(&c->buf, "", 0);
}

void cpio_release(struct cpio *c)
{
	for (size_t i = 0; i < c->n_paths; i++)
		free(c->paths[i]);
	free(c->paths);
	strbuf_release(&c->buf);
	memset(c, 0, sizeof(*c));
}

static int seen(struct cpio *c, const char *path)
{
	for (size_t i = 0; i < c->n_paths; i++)
		if (!strcmp(c->paths[i], path))
			return 1;
	ALLOC_GROW(c->paths, c->n_paths + 1, c->alloc_paths);
	c->paths[c->n_paths++] = xstrdup(path);
	return 0;
}

static void pad4(struct cpio *c)
{
	while (c->buf.len % 4)
		strbuf_add(&c->buf, "", 1);
}

/* name is without the leading '/' in the archive */
static void header(struct cpio *c, const char *path, unsigned mode, size_t size,
		   unsigned rmaj, unsigned rmin)
{
	const char *name = path[0] == '/' ? path + 1 : path;

	strbuf_addf(&c->buf, "070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
		    ++c->ino, mode, 0u, 0u, (mode & S_IFMT) == S_IFDIR ? 2u : 1u, 0u,
		    (unsigned)size, 0u, 0u, rmaj, rmin, (unsigned)strlen(name) + 1, 0u);
	strbuf_add(&c->buf, name, strlen(name) + 1);
	pad4(c);
}

static void add_parents(struct cpio *c, const char *path)
{
	char *p = xstrdup(path);
	for (char *s = p + 1; *s; s++)
		if (*s == '/') {
			*s = '\0';
			cpio_add_dir(c, p);
			*s = '/';
		}
	free(p);
}

void cpio_add_dir(struct cpio *c, const char *path)
{
	if (!strcmp(path, "/") || !*path)
		return;
	add_parents(c, path);
	if (seen(c, path))
		return;
	header(c, path, S_IFDIR | 0755, 0, 0, 0);
}

void cpio_add_data(struct cpio *c, const char *path, const void *data, size_t len,
		   unsigned mode)
{
	add_parents(c, path);
	if (seen(c, path))
		return;
	header(c, path, S_IFREG | (mode & 07777), len, 0, 0);
	strbuf_add(&c->buf, data, len);
	pad4(c);
}

void cpio_add_symlink(struct cpio *c, const char *path, const char *target)
{
	add_parents(c, path);
	if (seen(c, path))
		return;
	header(c, path, S_IFLNK | 0777, strlen(target), 0, 0);
	strbuf_add(&c->buf, target, strlen(target));
	pad4(c);
}

void cpio_add_chardev(struct cpio *c, const char *path, unsigned major, unsigned minor)
{
	add_parents(c, path);
	if (seen(c, path))
		return;
	header(c, path, S_IFCHR | 0600, 0, major, minor);
}

int cpio_add_file(struct cpio *c, const char *host, const char *as, char *why, size_t len)
{
	struct stat st;
	size_t n;
	char *data;

	if (stat(host, &st) < 0 || !S_ISREG(st.st_mode)) {
		snprintf(why, len, "cannot pack '%s': %s", host,
			 errno ? strerror(errno) : "not a regular file");
		return -1;
	}
	if (!(data = read_file(host, &n))) {
		snprintf(why, len, "cannot read '%s': %s", host, strerror(errno));
		return -1;
	}
	cpio_add_data(c, as ? as : host, data, n, st.st_mode & 0777);
	free(data);
	return 0;
}

static char *which(const char *prog)
{
	if (strchr(prog, '/'))
		return access(prog, X_OK) == 0 ? realpath(prog, NULL) : NULL;
	const char *path = getenv("PATH");
	char *copy = xstrdup(path ? path : "/usr/local/bin:/usr/bin:/bin"), *save = NULL;
	char *found = NULL;
	for (char *d = strtok_r(copy, ":", &save); d && !found; d = strtok_r(NULL, ":", &save)) {
		char *full = xasprintf("%s/%s", *d ? d : ".", prog);
		struct stat st;
		if (stat(full, &st) == 0 && S_ISREG(st.st_mode) && access(full, X_OK) == 0)
			found = full;
		else
			free(full);
	}
	free(copy);
	return found;
}

int cpio_add_program(struct cpio *c, const char *prog, char *why, size_t len)
{
	char *path = which(prog), *cmd = NULL, *line = NULL;
	size_t cap = 0;
	FILE *f = NULL;
	int ret = -1;

	if (!path) {
		snprintf(why, len, "cannot pack '%s': not found", prog);
		return -1;
	}
	/* at the name it is called by, and at its real path */
	if (strchr(prog, '/') && strcmp(prog, path) && cpio_add_file(c, path, prog, why, len) < 0)
		goto out;
	if (cpio_add_file(c, path, NULL, why, len) < 0)
		goto out;
	struct strbuf sb = STRBUF_INIT;	/* the path one shell word, whatever it holds */
	strbuf_addstr(&sb, "ldd ");
	strbuf_add_shell_word(&sb, path);
	strbuf_addstr(&sb, " 2>/dev/null");
	cmd = strbuf_detach(&sb);
	if (!(f = popen(cmd, "r"))) {
		snprintf(why, len, "cannot run ldd: %s", strerror(errno));
		goto out;
	}
	while (getline(&line, &cap, f) > 0) {
		char *p = strstr(line, "=> "), *lib, *end;
		lib = p ? p + 3 : line;
		while (*lib == ' ' || *lib == '\t')
			lib++;
		if (*lib != '/')
			continue;
		end = strpbrk(lib, " \t\n(");
		if (end)
			*end = '\0';
		char *real = realpath(lib, NULL);
		if (!real) {
			snprintf(why, len, "cannot pack '%s': its library '%s' is missing", prog, lib);
			goto out;
		}
		int r = cpio_add_file(c, real, lib, why, len);
		free(real);
		if (r < 0)
			goto out;
	}
	ret = 0;
out:
	if (f)
		pclose(f);
	free(line);
	free(cmd);
	free(path);
	return ret;
}

void cpio_finish(struct cpio *c)
{
	header(c, "TRAILER!!!", 0, 0, 0, 0);
	while (c->buf.len % 512)
		strbuf_add(&c->buf, "", 1);
}
