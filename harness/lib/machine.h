/*
 * machine.h - the one probe of the machine perturb runs on: what `perturb
 * run` stores with each run (provenance) and what `perturb doctor` judges.
 *
 * The provenance fields are malloc'd strings, "unavailable" when they cannot
 * be read (that word is what the store keeps); machine_has() tells them
 * apart.  The noise controls (boost, no_turbo, isolated) are raw file
 * contents, NULL when the file is absent: doctor only.
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
	/* not stored: NULL when absent */
	char *boost;		/* /sys/devices/system/cpu/cpufreq/boost */
	char *no_turbo;		/* /sys/devices/system/cpu/intel_pstate/no_turbo */
	char *isolated;		/* /sys/devices/system/cpu/isolated */
};

void machine_probe(struct machine_info *m);
void machine_release(struct machine_info *m);
/* Was this provenance field read (not NULL, not "unavailable")? */
int machine_has(const char *field);
/*
 * The provenance fields as one JSON object on one line, in the order of the
 * struct, "cores" last: malloc'd.  The noise controls are not in it.
 */
char *machine_json(const struct machine_info *m);

#endif
