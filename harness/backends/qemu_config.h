/*
 * qemu_config.h - the qemu backend's block: `boot: {qemu: {...}}`, parsed
 * and validated (qemu_config.c) into v->cfg, and what the plan, the store
 * and the study ask of it (backend.h).
 */
#ifndef PERTURB_QEMU_CONFIG_H
#define PERTURB_QEMU_CONFIG_H

#include <stdint.h>
#include "backend.h"

struct boot_cfg {
	char *kernel;		/* PATH (resolved) or "debian"; NULL with config */
	char *initrd;		/* PATH or "auto" */
	char *cmdline;
	uint64_t memory_bytes;	/* 0 = default */
	int cpus;		/* 0 = default */
	int kvm;		/* -1 auto, 0 no, 1 yes */
	char *config;		/* Kconfig fragment (resolved) */
	char *source;		/* kernel source tree (resolved) */
	int boots;		/* 0 = default (1) */
	int deterministic;	/* -1 unset, 0, 1: QEMU -icount, virtual time */
};

/* backend.h's parse, release, finish, boots and virtual_time of the
 * qemu row. */
int qemu_config_parse(struct yn_ctx *y, const struct ynode *block, void *cfg);
void qemu_config_release(void *cfg);
void qemu_config_finish(struct variant *v, const struct experiment *exp);
int qemu_config_boots(const struct variant *v);
int qemu_config_virtual_time(const struct variant *v);

#endif
