/* stop.c - stop requests (see stop.h) */
#include "stop.h"
#include "lib/util.h"

#include <string.h>

static volatile sig_atomic_t stop_signal;
static int signals_installed;

static const int stop_signals[] = { SIGINT, SIGTERM, SIGHUP };

static void on_stop_signal(int sig)
{
	stop_signal = sig;
}

void stop_install_signals(void)
{
	struct sigaction sa;
	sigset_t set;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;
	sigemptyset(&sa.sa_mask);
	sigemptyset(&set);
	for (size_t i = 0; i < ARRAY_SIZE(stop_signals); i++) {
		sigaddset(&sa.sa_mask, stop_signals[i]);
		sigaddset(&set, stop_signals[i]);
	}
	sigprocmask(SIG_BLOCK, &set, NULL);
	for (size_t i = 0; i < ARRAY_SIZE(stop_signals); i++)
		sigaction(stop_signals[i], &sa, NULL);
	signals_installed = 1;
}

int stop_requested(void)
{
	return stop_signal;
}

void stop_clear(void)
{
	stop_signal = 0;
}

void stop_sleep_sigmask(sigset_t *mask, int honour_stop)
{
	sigprocmask(SIG_BLOCK, NULL, mask);
	if (!honour_stop || !signals_installed)
		return;
	for (size_t i = 0; i < ARRAY_SIZE(stop_signals); i++)
		sigdelset(mask, stop_signals[i]);
}
