/*
 * qemu_config.c - the qemu backend's block, `boot: {qemu: {...}}` (see
 * qemu_config.h; docs/perturb.1 lists its keys): parsed and validated when
 * the experiment is loaded, so that every mistake in it is reported with
 * its position before anything runs.
 */
#include "qemu_config.h"
#include "lib/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char *const boot_keys[] = { "qemu", NULL };
static const char *const qemu_keys[] = {
	"kernel", "initrd", "cmdline", "memory", "cpus", "kvm", "config", "source",
	"boots", "deterministic", NULL
};

int qemu_config_parse(struct yn_ctx *y, const struct ynode *n, void *cfg)
{
	struct boot_cfg *b = cfg;
	static const char *const kvm_words[] = { "auto", "false", "true", NULL };
	const struct ynode *q, *v;
	int kvm;

	if (yn_want_map(y, n, "boot") || yn_check_keys(y, n, "boot", boot_keys))
		return -1;
	if (!(q = yn_get(n, "qemu")))
		return yn_fail(y, n, "'boot' must hold one backend, 'qemu'");
	if (yn_want_map(y, q, "qemu") || yn_check_keys(y, q, "qemu", qemu_keys))
		return -1;
	b->kvm = -1;
	b->deterministic = -1;
	if (!yn_get(q, "kernel") && !yn_get(q, "config"))
		return yn_fail(y, q, "'qemu' has no 'kernel' (an image, or debian) and no 'config' "
			    "(a Kconfig fragment to build one from)");
	if (yn_get(q, "kernel") && yn_get(q, "config"))
		return yn_fail(y, yn_get_key(q, "config"), "'qemu' has both 'kernel' and 'config'; "
			    "config: builds the kernel, give one of them");
	if (yn_get(q, "source") && !yn_get(q, "config"))
		return yn_fail(y, yn_get_key(q, "source"), "'source' without 'config': the "
			    "source tree is what config: builds from");
	if (yn_get_str(y, q, "kernel", &b->kernel) || yn_get_str(y, q, "initrd", &b->initrd) ||
	    yn_get_str(y, q, "cmdline", &b->cmdline) || yn_get_str(y, q, "config", &b->config) ||
	    yn_get_str(y, q, "source", &b->source) || yn_get_count(y, q, "cpus", R_BOOT_CPUS, &b->cpus) ||
	    yn_get_count(y, q, "boots", R_BOOTS, &b->boots) ||
	    yn_get_size(y, q, "memory", R_BOOT_MEMORY, &b->memory_bytes) ||
	    yn_get_bool(y, q, "deterministic", &b->deterministic))
		return -1;
	if (b->kernel && !*b->kernel)
		return yn_fail(y, yn_get(q, "kernel"), "'kernel' must not be empty");
	if (b->config && !*b->config)
		return yn_fail(y, yn_get(q, "config"), "'config' must not be empty");
	if (b->source && !*b->source)
		return yn_fail(y, yn_get(q, "source"), "'source' must not be empty");
	/* paths in the file are relative to its folder */
	char **paths[] = { &b->kernel, &b->config, &b->source };
	for (size_t i = 0; i < sizeof(paths) / sizeof(*paths); i++) {
		char *r;
		if (!*paths[i] || (i == 0 && !strcmp(b->kernel, "debian")))
			continue;
		r = yn_resolve(y, *paths[i]);
		free(*paths[i]);
		*paths[i] = r;
	}
	if ((v = yn_get(q, "kvm"))) {
		if (yn_want_enum(y, v, "kvm", kvm_words, &kvm))
			return -1;
		b->kvm = kvm - 1;
	}
	return 0;
}

void qemu_config_release(void *cfg)
{
	struct boot_cfg *b = cfg;

	free(b->kernel);
	free(b->initrd);
	free(b->cmdline);
	free(b->config);
	free(b->source);
}

/* The top level's deterministic: is every boot: variant's default; a
 * variant's own value wins. */
void qemu_config_finish(struct variant *v, const struct experiment *exp)
{
	struct boot_cfg *b = v->cfg;

	if (b->deterministic < 0)
		b->deterministic = exp->deterministic;
}

int qemu_config_boots(const struct variant *v)
{
	const struct boot_cfg *b = v->cfg;
	return b->boots > 1 ? b->boots : 1;
}

int qemu_config_virtual_time(const struct variant *v)
{
	const struct boot_cfg *b = v->cfg;
	return b->deterministic == 1;
}
