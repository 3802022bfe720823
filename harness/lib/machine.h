/*
 * machine.h - provenance of the machine a study ran on.
 * Every field is a malloc'd string; "unavailable" when it cannot be read.
 */
#ifndef PERTURB_MACHINE_H
#define PERTURB_MACHINE_H

struct machine_info {
	char *hostname;
	char *kernel_release;	/* uname -r */
	char *kernel_version;	/* uname -v */
	char *kernel_cmdline;	/* /proc/cmdline */
	char *arch;
	char *cpu_model;	/* /proc/cpuinfo "model name" */
	int cores;		/* online CPUs */
	char *governor;		/* cpu0 scaling_governor */
	char *smt;		/* /sys/devices/system/cpu/smt/active: "on"/"off" */
	char *aslr;		/* /proc/sys/kernel/randomize_va_space */
	char *loadavg;		/* first three fields of /proc/loadavg */
	char *perturb_version;
};

void machine_probe(struct machine_info *m);
void machine_release(struct machine_info *m);
/* A JSON object with every field (malloc'd). */
char *machine_json(const struct machine_info *m);

#endif
