/*
 * counters_papi.c - the PAPI backend; see counters.h and
 * counters_backend.h.
 *
 * One event set bound to PAPI's perf_event component, with PAPI_INHERIT
 * (children are counted) and the domain user + kernel (PAPI's default is
 * user only; perf_event_open's default, and perturb's, is both).  Events
 * are added one at a time so that one PAPI cannot schedule with the others
 * is refused alone (PAPI's perf_event component tries to open the events
 * when they are added).  A run attaches the set to the waiting child
 * (PAPI_attach), starts it, and after the exit stops it and detaches.
 *
 * PAPI_query_event() is not trusted: on a virtual machine without a PMU it
 * says yes to PAPI_TOT_CYC, and only adding the event (or setting
 * PAPI_INHERIT, which opens a test event) tells the truth.  Hence
 * papi_events_probe(), which does everything a run does on a helper child.
 */
#include "counters_backend.h"
#include "lib/util.h"

#include <errno.h>
#include <fcntl.h>
#include <papi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct papi_events {
	int es;			/* PAPI_NULL when none */
	size_t n;
	int attached, running;
};

static int init_state;		/* 0 not tried, 1 ok, -1 failed */
static char init_why[256];
static enum counters_papi_sim sim;

void papi_backend_simulate(enum counters_papi_sim s)
{
	sim = s;
}

static int papi_fail(char *why, size_t len, const char *what, int rc)
{
	snprintf(why, len, "%s: %s", what, PAPI_strerror(rc));
	return -1;
}

/* The index of the perf_event component, or -1 with why. */
static int perf_component(char *why, size_t len)
{
	const PAPI_component_info_t *ci;
	int cidx;

	if (sim == COUNTERS_PAPI_SIM_NO_COMPONENT) {
		snprintf(why, len, "no perf_event component (simulated)");
		return -1;
	}
	cidx = PAPI_get_component_index("perf_event");
	if (cidx < 0) {
		snprintf(why, len, "no perf_event component (%d components)",
			 PAPI_num_components());
		return -1;
	}
	ci = PAPI_get_component_info(cidx);
	if (!ci || ci->disabled) {
		snprintf(why, len, "the perf_event component is disabled: %s",
			 ci && ci->disabled_reason[0] ? ci->disabled_reason : "no reason given");
		return -1;
	}
	return cidx;
}

int papi_backend_init(char *why, size_t len)
{
	int rc;

	if (sim == COUNTERS_PAPI_SIM_INIT_FAIL) {
		snprintf(why, len, "PAPI_library_init: %s (simulated)",
			 PAPI_strerror(PAPI_ESYS));
		return -1;
	}
	if (!init_state) {
		rc = PAPI_library_init(PAPI_VER_CURRENT);
		if (rc != PAPI_VER_CURRENT) {
			if (rc > 0)
				snprintf(init_why, sizeof(init_why),
					 "PAPI_library_init: version mismatch (library %d.%d, built against %d.%d)",
					 PAPI_VERSION_MAJOR(rc), PAPI_VERSION_MINOR(rc),
					 PAPI_VERSION_MAJOR(PAPI_VER_CURRENT),
					 PAPI_VERSION_MINOR(PAPI_VER_CURRENT));
			else
				papi_fail(init_why, sizeof(init_why), "PAPI_library_init", rc);
			init_state = -1;
		} else {
			init_state = 1;
		}
	}
	if (init_state < 0) {
		snprintf(why, len, "%s", init_why);
		return -1;
	}
	return perf_component(why, len) < 0 ? -1 : 0;
}

struct papi_events *papi_events_new(char *why, size_t len)
{
	struct papi_events *pe = xcalloc(1, sizeof(*pe));
	PAPI_option_t opt;
	int cidx, rc;

	pe->es = PAPI_NULL;
	if ((cidx = perf_component(why, len)) < 0)
		goto fail;
	if ((rc = PAPI_create_eventset(&pe->es)) != PAPI_OK) {
		pe->es = PAPI_NULL;
		papi_fail(why, len, "PAPI_create_eventset", rc);
		goto fail;
	}
	if ((rc = PAPI_assign_eventset_component(pe->es, cidx)) != PAPI_OK) {
		papi_fail(why, len, "PAPI_assign_eventset_component", rc);
		goto fail;
	}
	memset(&opt, 0, sizeof(opt));
	opt.inherit.eventset = pe->es;
	opt.inherit.inherit = PAPI_INHERIT_ALL;
	if ((rc = PAPI_set_opt(PAPI_INHERIT, &opt)) != PAPI_OK) {
		papi_fail(why, len, "cannot count a process tree (PAPI_INHERIT)", rc);
		goto fail;
	}
	memset(&opt, 0, sizeof(opt));
	opt.domain.eventset = pe->es;
	opt.domain.domain = PAPI_DOM_USER | PAPI_DOM_KERNEL;
	if ((rc = PAPI_set_opt(PAPI_DOMAIN, &opt)) != PAPI_OK) {
		papi_fail(why, len, "cannot count user and kernel mode (PAPI_DOMAIN)", rc);
		goto fail;
	}
	return pe;
fail:
	papi_events_free(pe);
	return NULL;
}

void papi_events_free(struct papi_events *pe)
{
	if (!pe)
		return;
	papi_events_detach(pe);
	if (pe->es != PAPI_NULL) {
		PAPI_cleanup_eventset(pe->es);
		PAPI_destroy_eventset(&pe->es);
	}
	free(pe);
}

int papi_events_add(struct papi_events *pe, const char *name, char *why, size_t len)
{
	int code, rc;

	if ((rc = PAPI_event_name_to_code(name, &code)) != PAPI_OK)
		return papi_fail(why, len, name, rc);
	if ((rc = PAPI_add_event(pe->es, code)) != PAPI_OK)
		return papi_fail(why, len, name, rc);
	pe->n++;
	return 0;
}

int papi_events_attach(struct papi_events *pe, pid_t pid, char *why, size_t len)
{
	int rc;

	if ((rc = PAPI_attach(pe->es, (unsigned long)pid)) != PAPI_OK)
		return papi_fail(why, len, "PAPI_attach", rc);
	pe->attached = 1;
	if ((rc = PAPI_start(pe->es)) != PAPI_OK) {
		papi_events_detach(pe);
		return papi_fail(why, len, "PAPI_start", rc);
	}
	pe->running = 1;
	return 0;
}

int papi_events_collect(struct papi_events *pe, long long *values, char *why, size_t len)
{
	int rc, ret = 0;

	if (!pe->running) {
		papi_events_detach(pe);
		snprintf(why, len, "not started");
		return -1;
	}
	rc = PAPI_stop(pe->es, values);
	pe->running = 0;
	if (rc != PAPI_OK)
		ret = papi_fail(why, len, "PAPI_stop", rc);
	papi_events_detach(pe);
	return ret;
}

void papi_events_detach(struct papi_events *pe)
{
	if (pe->running) {
		long long *v = xcalloc(pe->n ? pe->n : 1, sizeof(*v));
		PAPI_stop(pe->es, v);
		free(v);
		pe->running = 0;
	}
	if (pe->attached) {
		PAPI_detach(pe->es);
		pe->attached = 0;
	}
}

int papi_events_probe(struct papi_events *pe, char *why, size_t len)
{
	long long *v = NULL;
	int go[2], ret = -1;
	pid_t pid;

	if (pipe2(go, O_CLOEXEC) < 0) {
		snprintf(why, len, "cannot create a pipe: %s", strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		snprintf(why, len, "cannot fork: %s", strerror(errno));
		close(go[0]);
		close(go[1]);
		return -1;
	}
	if (!pid) {
		char c;
		close(go[1]);
		while (read(go[0], &c, 1) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	close(go[0]);
	v = xcalloc(pe->n ? pe->n : 1, sizeof(*v));
	if (papi_events_attach(pe, pid, why, len) == 0 &&
	    papi_events_collect(pe, v, why, len) == 0)
		ret = 0;
	papi_events_detach(pe);
	close(go[1]);		/* the helper sees EOF and exits */
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	free(v);
	return ret;
}
