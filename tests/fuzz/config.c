/*
 * fuzz/config.c - libFuzzer target: the experiment-file loader.
 *
 * Each input is written as exp.yaml into a private folder and loaded with
 * config_load(), as `perturb run` would; a load either succeeds or fails
 * with a message, and must never crash, leak or read outside the limits
 * that engine/config.h states.  The seed corpus is the configuration
 * corpus, the .yaml files of tests/config/.  Built and run by `make fuzz`.
 */
#include "engine/config.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[64], path[96];

static void cleanup(void)
{
	unlink(path);
	rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct experiment exp;
	char err[1024];
	int fd;

	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/tmp/perturb-fuzz-XXXXXX");
		if (!mkdtemp(dir))
			abort();
		snprintf(path, sizeof(path), "%s/exp.yaml", dir);
		atexit(cleanup);
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size))
		abort();
	close(fd);
	if (config_load(path, &exp, err, sizeof(err)) == 0)
		experiment_release(&exp);
	return 0;
}
