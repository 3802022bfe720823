/*
 * affinity - print the CPUs this process may run on: "cpus: 0,1".
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>

int main(void)
{
	cpu_set_t set;
	const char *sep = "";

	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return 1;
	printf("cpus: ");
	for (int i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &set)) {
			printf("%s%d", sep, i);
			sep = ",";
		}
	printf("\n");
	return 0;
}
