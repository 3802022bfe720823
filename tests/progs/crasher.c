/*
 * crasher - die of a signal: crasher segv | abort | kill | term
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "segv";

	signal(SIGSEGV, SIG_DFL);
	if (!strcmp(how, "abort"))
		abort();
	if (!strcmp(how, "kill"))
		raise(SIGKILL);
	if (!strcmp(how, "term"))
		raise(SIGTERM);
	raise(SIGSEGV);
	return 1;
}
