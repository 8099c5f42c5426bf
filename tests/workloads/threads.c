// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * threads [NTHREADS [SECONDS]]: NTHREADS threads (default 16) that for
 * SECONDS (default 2) alternate computing in user space with system calls
 * that do real work in the kernel (reads of /dev/zero into a large buffer,
 * writes to /dev/null, getppid, sched_yield), so that samples land in both
 * user and kernel mode, many threads on every CPU.
 */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common.h"

static double seconds = 2;
static char bufs[64][65536];

static NOINLINE void do_syscalls(int idx, int zero, int null)
{
	char *buf = bufs[idx % 64];

	if (read(zero, buf, sizeof(bufs[0])) < 0)
		perror("read /dev/zero");
	if (write(null, buf, sizeof(bufs[0])) < 0)
		perror("write /dev/null");
	syscall(SYS_getppid);
	sched_yield();
}

static NOINLINE void thread_loop(int idx)
{
	int zero = open("/dev/zero", O_RDONLY);
	int null = open("/dev/null", O_WRONLY);
	double end = now_s() + seconds;

	if (zero < 0 || null < 0) {
		perror("open");
		exit(1);
	}
	while (now_s() < end) {
		compute(50000 + 1000 * idx);
		do_syscalls(idx, zero, null);
	}
	close(zero);
	close(null);
}

static void *thread_main(void *arg)
{
	thread_loop((int)(intptr_t)arg);
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 16;
	pthread_t *tids;

	if (argc > 2)
		seconds = atof(argv[2]);
	if (n < 1 || n > 1024 || seconds <= 0) {
		fprintf(stderr, "usage: threads [NTHREADS [SECONDS]]\n");
		return 2;
	}
	tids = calloc(n, sizeof(*tids));
	for (int i = 0; i < n; i++)
		if (pthread_create(&tids[i], NULL, thread_main, (void *)(intptr_t)i)) {
			perror("pthread_create");
			return 1;
		}
	for (int i = 0; i < n; i++)
		pthread_join(tids[i], NULL);
	free(tids);
	return 0;
}
