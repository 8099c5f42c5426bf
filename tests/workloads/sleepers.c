// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * sleepers SECONDS [NTHREADS]: many tasks blocked in the kernel for seconds
 * at a time beside two busy ones, for SECONDS of wall time: the case where
 * many samples wait for their deferred user stacks at once.
 *
 *   NTHREADS (default 300) sleepers: compute a little, then block for 1.5 to
 *            3 s, in turn in nanosleep(), FUTEX_WAIT with a timeout and
 *            poll() of a pipe nobody writes; again until the end
 *   2 busy   compute and write() to /dev/null, without pause
 *
 * Each block is a context switch taken in the kernel (a sample of
 * context-switches/period=1/), whose user stack the kernel unwinds only when
 * the sleeper returns to user space, 1.5 to 3 s later.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common.h"

static double end_time;
static int idle_pipe[2];
static int devnull;
static uint32_t futex_word;

/* a block of 1.5 to 3 s, from a per-thread LCG (rand() takes a lock) */
static double block_seconds(unsigned *state)
{
	*state = *state * 1103515245u + 12345u;
	return 1.5 + 1.5 * ((*state >> 8) % 1000) / 1000.0;
}

static NOINLINE void block_in_nanosleep(double s)
{
	compute(20000);
	sleep_s(s);
}

static NOINLINE void block_in_futex(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (time_t)s) * 1e9) };

	compute(20000);
	syscall(SYS_futex, &futex_word, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);
}

static NOINLINE void block_in_poll(double s)
{
	struct pollfd p = { .fd = idle_pipe[0], .events = POLLIN };

	compute(20000);
	poll(&p, 1, (int)(s * 1000));
}

static void *sleeper(void *arg)
{
	unsigned state = (unsigned)(uintptr_t)arg * 2654435761u + 1;

	for (unsigned i = (unsigned)(uintptr_t)arg; now_s() < end_time; i++) {
		double s = block_seconds(&state);

		if (now_s() + s > end_time)
			s = end_time - now_s();
		switch (i % 3) {
		case 0:
			block_in_nanosleep(s);
			break;
		case 1:
			block_in_futex(s);
			break;
		default:
			block_in_poll(s);
			break;
		}
	}
	return NULL;
}

static NOINLINE void busy_write(void)
{
	static const char buf[512];

	if (write(devnull, buf, sizeof(buf)) < 0)
		perror("write /dev/null");
}

static void *busy(void *arg)
{
	(void)arg;
	while (now_s() < end_time) {
		compute(50000);
		busy_write();
	}
	return NULL;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 0;
	long nthreads = argc > 2 ? atol(argv[2]) : 300;
	pthread_attr_t attr;
	pthread_t *t;

	if (seconds <= 0 || nthreads <= 0 || nthreads > 10000) {
		fprintf(stderr, "usage: sleepers SECONDS [NTHREADS (1-10000)]\n");
		return 2;
	}
	devnull = open("/dev/null", O_WRONLY);
	if (devnull < 0 || pipe(idle_pipe)) {
		perror("open /dev/null, pipe");
		return 1;
	}
	t = calloc(nthreads + 2, sizeof(*t));
	if (!t)
		return 1;
	/* small stacks: 300 threads of 8 MiB each are 2.4 GiB of address space */
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256 << 10);
	end_time = now_s() + seconds;
	for (long i = 0; i < nthreads + 2; i++) {
		void *(*fn)(void *) = i < 2 ? busy : sleeper;

		if (pthread_create(&t[i], &attr, fn, (void *)(uintptr_t)i)) {
			perror("pthread_create");
			return 1;
		}
	}
	for (long i = 0; i < nthreads + 2; i++)
		pthread_join(t[i], NULL);
	free(t);
	return 0;
}
