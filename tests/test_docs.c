/*
 * test_docs.c - the documents in docs/ stay true to the code: every key the
 * experiment-file loader accepts (each `static const char *const *_keys[]`
 * table of harness/engine/ and harness/backends/, wherever the boot: block
 * is parsed) is named in docs/experiment.md as `key`.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util.h"

static const char *src_dir(void)
{
	const char *s = getenv("PERTURB_SRC");
	return s && *s ? s : ".";
}

/* Every "..." of the *_keys[] tables of text, each checked against doc. */
static size_t check_tables(const char *file, const char *text, const char *doc)
{
	size_t n = 0;
	const char *p = text, *end;

	while ((p = strstr(p, "_keys[] = {"))) {
		end = strstr(p, "NULL");
		cr_assert(end, "%s: a key table without its NULL", file);
		for (const char *q = strchr(p, '"'); q && q < end; q = strchr(q, '"')) {
			const char *close = strchr(q + 1, '"');
			char *key = xstrndup(q + 1, (size_t)(close - q - 1));
			char *quoted = xasprintf("`%s`", key);
			cr_expect(strstr(doc, quoted), "docs/experiment.md does not name key '%s' (%s)",
				  key, file);
			n++;
			free(quoted);
			free(key);
			q = close + 1;
		}
		p = end;
	}
	return n;
}

Test(docs, experiment_reference_names_every_key)
{
	static const char *const dirs[] = { "harness/engine", "harness/backends" };
	char *path = xasprintf("%s/docs/experiment.md", src_dir());
	char *doc = read_file(path, NULL);
	size_t keys = 0;

	cr_assert(doc, "cannot read %s", path);
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		char *d = xasprintf("%s/%s", src_dir(), dirs[i]);
		DIR *dh = opendir(d);
		struct dirent *e;
		cr_assert(dh, "cannot open %s", d);
		while ((e = readdir(dh))) {
			size_t len = strlen(e->d_name);
			if (len < 3 || strcmp(e->d_name + len - 2, ".c"))
				continue;
			char *f = xasprintf("%s/%s", d, e->d_name);
			char *text = read_file(f, NULL);
			cr_assert(text, "cannot read %s", f);
			keys += check_tables(f, text, doc);
			free(text);
			free(f);
		}
		closedir(dh);
		free(d);
	}
	/* the experiment, variant, kernel, boot, qemu, workload, metric,
	 * include and gate tables: far more than 40 keys */
	cr_expect_gt(keys, 40, "only %zu keys found: the tables moved?", keys);
	free(doc);
	free(path);
}
