// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * forker [SECONDS [WIDTH]]: fork/exit and thread create/exit churn for
 * SECONDS (default 2): rounds of WIDTH (default 4) children that compute a
 * little, make a system call and _exit(), and in each round one short-lived
 * thread, all reaped before the next round.  Samples are taken in tasks that
 * exit right after, some on their way out of the kernel for the last time.
 */
#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

static NOINLINE void child_work(int i)
{
	compute(100000 + 20000 * i);
	syscall(SYS_getppid);
	compute(50000);
}

static void *thread_main(void *arg)
{
	(void)arg;
	compute(80000);
	return NULL;
}

static NOINLINE int one_round(int width)
{
	pthread_t t;
	int n = 0;

	for (int i = 0; i < width; i++) {
		pid_t pid = fork();

		if (pid == 0) {
			child_work(i);
			_exit(0);
		}
		if (pid < 0) {
			perror("fork");
			break;
		}
		n++;
	}
	if (pthread_create(&t, NULL, thread_main, NULL) == 0)
		pthread_join(t, NULL);
	while (n > 0 && wait(NULL) > 0)
		n--;
	return 0;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 2;
	int width = argc > 2 ? atoi(argv[2]) : 4;
	double end = now_s() + seconds;
	unsigned rounds = 0;

	if (seconds <= 0 || width < 1) {
		fprintf(stderr, "usage: forker [SECONDS [WIDTH]]\n");
		return 2;
	}
	while (now_s() < end) {
		one_round(width);
		rounds++;
	}
	fprintf(stderr, "forker: %u rounds of %d children\n", rounds, width);
	return 0;
}
