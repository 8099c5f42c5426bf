// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * blocker [SCALE]: threads that block in the kernel for seconds while two
 * others compute (half the time) so that samples keep accumulating.  With
 * SCALE 1 (default) the whole run takes about 4.5 s:
 *
 *   sleeper      nanosleep 2 s, then 3 s
 *   pipe-reader  read() on an empty pipe, woken by main after 3 s
 *   futex        FUTEX_WAIT that times out after 4 s
 *   pipe-writer  one write() of 4 MB into a 1 MB pipe: copies 1 MB in the
 *                kernel (samples taken in that same system call), then
 *                blocks until main drains the pipe after 2.5 s
 *   2 x compute  compute 5 ms, sleep 5 ms, until the end
 *
 * A sample taken in the kernel before the block gets its deferred user stack
 * only when the thread returns to user space, seconds later.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common.h"

static double scale = 1;
static int rpipe[2], wpipe[2];
static volatile int done;
static uint32_t futex_word;

static NOINLINE void block_in_nanosleep(double s)
{
	compute(200000);
	sleep_s(s);
}

static void *sleeper(void *arg)
{
	(void)arg;
	block_in_nanosleep(2 * scale);
	block_in_nanosleep(scale);
	return NULL;
}

static NOINLINE void block_in_read(void)
{
	char c;

	compute(200000);
	if (read(rpipe[0], &c, 1) != 1)
		perror("read pipe");
}

static void *pipe_reader(void *arg)
{
	(void)arg;
	block_in_read();
	return NULL;
}

static NOINLINE void block_in_futex(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (time_t)s) * 1e9) };

	compute(200000);
	syscall(SYS_futex, &futex_word, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);
}

static void *futex_waiter(void *arg)
{
	(void)arg;
	block_in_futex(4 * scale);
	return NULL;
}

#define WRITE_SIZE (4 << 20)
static NOINLINE void block_in_write(char *buf)
{
	ssize_t off = 0;

	while (off < WRITE_SIZE) {
		ssize_t n = write(wpipe[1], buf + off, WRITE_SIZE - off);

		if (n <= 0) {
			perror("write pipe");
			return;
		}
		off += n;
	}
}

static void *pipe_writer(void *arg)
{
	char *buf = malloc(WRITE_SIZE);

	(void)arg;
	memset(buf, 'x', WRITE_SIZE);
	block_in_write(buf);
	free(buf);
	return NULL;
}

static NOINLINE void compute_half(void)
{
	while (!done) {
		compute_for(0.005);
		sleep_s(0.005);
	}
}

static void *computer(void *arg)
{
	(void)arg;
	compute_half();
	return NULL;
}

static NOINLINE void drain(void)
{
	static char buf[1 << 16];

	for (ssize_t left = WRITE_SIZE; left > 0;) {
		ssize_t n = read(wpipe[0], buf, sizeof(buf));

		if (n <= 0) {
			perror("read drain");
			return;
		}
		left -= n;
	}
}

int main(int argc, char **argv)
{
	pthread_t t[6];
	double start;

	if (argc > 1)
		scale = atof(argv[1]);
	if (scale <= 0) {
		fprintf(stderr, "usage: blocker [SCALE]\n");
		return 2;
	}
	if (pipe(rpipe) || pipe(wpipe)) {
		perror("pipe");
		return 1;
	}
	if (fcntl(wpipe[1], F_SETPIPE_SZ, 1 << 20) < 0)
		perror("F_SETPIPE_SZ");
	start = now_s();
	pthread_create(&t[0], NULL, sleeper, NULL);
	pthread_create(&t[1], NULL, pipe_reader, NULL);
	pthread_create(&t[2], NULL, futex_waiter, NULL);
	pthread_create(&t[3], NULL, pipe_writer, NULL);
	pthread_create(&t[4], NULL, computer, NULL);
	pthread_create(&t[5], NULL, computer, NULL);

	sleep_s(2.5 * scale);
	drain();
	sleep_s(start + 3 * scale - now_s());
	if (write(rpipe[1], "x", 1) != 1)
		perror("write pipe");
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	sleep_s(0.2 * scale);
	done = 1;
	pthread_join(t[4], NULL);
	pthread_join(t[5], NULL);
	return 0;
}
