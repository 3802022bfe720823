/*
 * stages.h - where perturb spends its time per run, measured when the
 * environment has PERTURB_TIMING (bench/harness-breakdown.sh).
 *
 * The code that runs a study names the stage it enters (stage_enter); the
 * time from one call to the next is added to the stage it closes.  At the
 * exit of the process a table goes to the file PERTURB_TIMING names
 * (appended; "1": stderr): per stage its total, its mean per run (runs are
 * the entries into STAGE_SPAWN), its share of the time of all stages, and
 * the CPU time perturb's thread used in it per run (CLOCK_THREAD_CPUTIME_ID:
 * what a busy machine does not inflate, but the child's part of a vfork
 * or the kernel's work in another context is not in it).
 * Without PERTURB_TIMING a call is one predictable branch.  One thread: a
 * duet's two runners mix their stages (measure a sequential order).
 */
#ifndef PERTURB_STAGES_H
#define PERTURB_STAGES_H

enum stage {
	STAGE_PLAN,		/* between runs: the plan's next entry, its variant,
				 * its workload's prepare, the progress line */
	STAGE_CGROUP,		/* the run's cgroup taken, its escapees watched */
	STAGE_SPAWN,		/* the child created (clone/vfork), set up, exec'd */
	STAGE_WAIT,		/* the workload runs: perturb waits on its pidfd */
	STAGE_REAP,		/* its group killed, wait4, its output drained, its
				 * status and metrics */
	STAGE_CGROUP_END,	/* its cgroup: leftovers killed, escapees, usage,
				 * given back */
	STAGE_RESULT,		/* the backend's values, the counters' readings */
	STAGE_STORE,		/* the result written to the database */
	STAGE_N
};

void stage_enter(enum stage s);
/* Close the open stage and count nothing until the next stage_enter():
 * the study's end, so that its report is not charged to the plan. */
void stage_leave(void);

#endif
