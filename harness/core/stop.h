/*
 * stop.h - perturb's stop requests: SIGINT, SIGTERM or SIGHUP asks the
 * study to stop; the processes perturb waits for (runs, commands, daemons,
 * guests) are then ended and nothing is left running.
 *
 * stop_install_signals() installs handlers that record the signal;
 * stop_requested() returns it (0 when none).  The stop signals are blocked
 * outside the waits, so that a request is never lost between a check and
 * a wait: a wait sleeps with stop_sleep_sigmask() (proc_poll() does).
 * Without the handlers installed (tests, library use) nothing changes.
 */
#ifndef PERTURB_STOP_H
#define PERTURB_STOP_H

#include <signal.h>

/* A process group asked to end (SIGTERM) gets this long before SIGKILL. */
#define STOP_KILL_GRACE_S 2.0

void stop_install_signals(void);
int stop_requested(void);
/* Forget the request (tests). */
void stop_clear(void);
/* The signal mask to sleep with in ppoll(): the current mask, with the stop
 * signals unblocked when honour_stop and the handlers are installed. */
void stop_sleep_sigmask(sigset_t *mask, int honour_stop);

#endif
