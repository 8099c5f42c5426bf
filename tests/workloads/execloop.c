// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * execloop N: N generations of one process that execve()s itself: each
 * generation computes a little, runs /bin/true in a child (fork + execve),
 * then execve()s this program with N - 1.  Samples taken in the kernel
 * during an execve get their deferred user stack after the exec, from the
 * new program.
 */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

extern char **environ;

static NOINLINE void run_true(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		char *argv[] = { "true", NULL };

		execve("/bin/true", argv, environ);
		_exit(127);
	}
	if (pid > 0)
		waitpid(pid, NULL, 0);
}

static NOINLINE void exec_self(const char *self, int n)
{
	char num[16];
	char *argv[] = { (char *)self, num, NULL };

	snprintf(num, sizeof(num), "%d", n);
	execve("/proc/self/exe", argv, environ);
	perror("execve");
	exit(1);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 50;

	compute(300000);
	run_true();
	if (n > 0)
		exec_self(argv[0], n - 1);
	return 0;
}
