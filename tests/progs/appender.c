/*
 * appender - append one line (its pid) to FILE, then exit with STATUS.
 *   appender FILE [STATUS]
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int fd;

	if (argc < 2)
		return 2;
	fd = open(argv[1], O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (fd < 0)
		return 1;
	dprintf(fd, "%d\n", (int)getpid());
	close(fd);
	return argc > 2 ? atoi(argv[2]) : 0;
}
