// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * offcpu SECONDS [DIR]: threads that block for known times in known
 * functions, each measuring its own time off CPU, for the off-CPU checks
 * (perf record --off-cpu; perf stitch -F folded --count=off-cpu):
 *
 *   block_nanosleep   nanosleep() of 4 ms
 *   block_pipe_read   read() of a pipe that pace_pipe_writer() writes to
 *                     every 6 ms
 *   block_futex       FUTEX_WAIT until pace_futex_waker() wakes it, every
 *                     5 ms
 *   block_io          pwrite() and fdatasync() of a file in DIR (I/O where
 *                     DIR is on a disk or virtiofs; nothing on a tmpfs)
 *
 * for SECONDS of wall time.  Each block_* function's time off CPU is its
 * wall time minus its thread's CPU time (CLOCK_THREAD_CPUTIME_ID) around
 * each call of it: the time its thread did not run, sleeping or waiting
 * for a CPU.  The clocks are read by its caller, the thread CPU clock
 * (a system call, where a preemption is taken on the way out) outside the
 * wall clock's readings, so that a preemption the window does not count
 * has no block_* frame in its stack either.  At the end it prints, per
 * function:
 *
 *   offcpu FUNCTION NANOSECONDS CALLS
 *
 * and the time the hypervisor took from the machine's CPUs meanwhile
 * (steal, /proc/stat): a thread's CPU clock leaves it out, its wall clock
 * does not, so the "off CPU" above holds what of it fell while the thread
 * ran, which its switches do not.  When the kernel accounts steal at all,
 * one clock tick per CPU is added, /proc/stat's granularity:
 *
 *   stolen NANOSECONDS
 *
 * The I/O writes 1 MiB before each fdatasync(): the thread CPU clock
 * starts and stops where __schedule() reads the run queue's clock, the
 * switches where its tracepoint fires and where it ends, microseconds
 * apart on a busy virtual machine; blocks near a millisecond keep that a
 * small part of the time measured, where 4 KiB ones (0.1 to 0.25 ms) were
 * off by -6% to +8%.
 *
 * Each blocking call is out of tail position and one frame below its
 * block_* function (call_*), so that the function has a frame of its own
 * in the user stack a frame pointer walk finds.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "offcpu.h"

static double deadline;
static volatile int done;
static int pipe_fds[2];
static uint32_t futex_word;
static const char *io_dir = ".";

static NOINLINE int call_write_sync(int fd, const void *buf, size_t n)
{
	int ret = pwrite(fd, buf, n, 0) == (ssize_t)n ? fdatasync(fd) : -1;

	sink++;
	return ret;
}

static NOINLINE int block_nanosleep(void)
{
	struct timespec ts = { 0, 4000000 };
	int ret = call_nanosleep(&ts);

	sink++;
	return ret;
}

static NOINLINE int block_pipe_read(void)
{
	char byte;
	int ret = call_read(pipe_fds[0], &byte, 1);

	sink++;
	return ret;
}

static NOINLINE int block_futex(uint32_t seen)
{
	long ret = call_futex_wait(&futex_word, seen);

	sink++;
	return (int)ret;
}

static NOINLINE int block_io(int fd)
{
	static char buf[1 << 20];
	int ret = call_write_sync(fd, buf, sizeof(buf));

	sink++;
	return ret;
}

static void *nanosleep_thread(void *arg)
{
	uint64_t start = thread_start(arg);

	while (now_s() < deadline)
		sink += TIMED(arg, block_nanosleep());
	thread_end(arg, start);
	return NULL;
}

static void *pipe_thread(void *arg)
{
	uint64_t start = thread_start(arg);

	/* the writer's last byte or its close ends the loop */
	while (TIMED(arg, block_pipe_read()) > 0)
		sink++;
	thread_end(arg, start);
	return NULL;
}

static NOINLINE void *pace_pipe_writer(void *arg)
{
	while (now_s() < deadline) {
		sleep_s(0.006);
		if (write(pipe_fds[1], "x", 1) != 1)
			break;
	}
	close(pipe_fds[1]);
	return arg;
}

static void *futex_thread(void *arg)
{
	uint64_t start = thread_start(arg);
	uint32_t seen;

	while (!done) {
		seen = __atomic_load_n(&futex_word, __ATOMIC_ACQUIRE);
		if (done)
			break;
		sink += TIMED(arg, block_futex(seen));
	}
	thread_end(arg, start);
	return NULL;
}

static NOINLINE void *pace_futex_waker(void *arg)
{
	while (now_s() < deadline) {
		sleep_s(0.005);
		__atomic_add_fetch(&futex_word, 1, __ATOMIC_RELEASE);
		syscall(SYS_futex, &futex_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	}
	done = 1;
	__atomic_add_fetch(&futex_word, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &futex_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	return arg;
}

static void *io_thread(void *arg)
{
	uint64_t start = thread_start(arg);
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/offcpu-io.%d", io_dir, (int)getpid());
	fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0600);
	if (fd < 0) {
		perror(path);
		return NULL;
	}
	while (now_s() < deadline)
		sink += TIMED(arg, block_io(fd));
	close(fd);
	unlink(path);
	thread_end(arg, start);
	return NULL;
}

/* /proc/stat's steal, all CPUs', in clock ticks; false if unreadable */
static int steal_ticks(unsigned long long *steal)
{
	unsigned long long user, nice, sys, idle, iowait, irq, softirq;
	FILE *f = fopen("/proc/stat", "r");
	int n = 0;

	if (f) {
		n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &user, &nice,
			   &sys, &idle, &iowait, &irq, &softirq, steal);
		fclose(f);
	}
	return n == 8;
}

int main(int argc, char **argv)
{
	struct offcpu_total totals[] = {
		{ .name = "block_nanosleep" }, { .name = "block_pipe_read" },
		{ .name = "block_futex" }, { .name = "block_io" },
	};
	void *(*threads[])(void *) = { nanosleep_thread, pipe_thread, futex_thread, io_thread };
	pthread_t tids[6];
	unsigned long long steal_before, steal_after;
	double tick_ns = 1e9 / sysconf(_SC_CLK_TCK);
	unsigned int i;
	int stolen;

	if (argc < 2) {
		fprintf(stderr, "usage: offcpu SECONDS [DIR]\n");
		return 2;
	}
	if (argc > 2)
		io_dir = argv[2];
	if (pipe(pipe_fds))
		return 1;
	stolen = steal_ticks(&steal_before);
	deadline = now_s() + atof(argv[1]);
	for (i = 0; i < 4; i++)
		pthread_create(&tids[i], NULL, threads[i], &totals[i]);
	pthread_create(&tids[4], NULL, pace_pipe_writer, NULL);
	pthread_create(&tids[5], NULL, pace_futex_waker, NULL);
	for (i = 0; i < 6; i++)
		pthread_join(tids[i], NULL);
	stolen = stolen && steal_ticks(&steal_after);
	for (i = 0; i < 4; i++)
		printf("offcpu %s %llu %llu\n", totals[i].name, (unsigned long long)totals[i].ns,
		       (unsigned long long)totals[i].calls);
	for (i = 0; i < 4; i++)
		printf("thread %s %d %llu\n", totals[i].name, totals[i].tid,
		       (unsigned long long)totals[i].wall_ns);
	if (stolen)
		printf("stolen %.0f\n", (steal_after - steal_before +
					  (steal_after ? sysconf(_SC_NPROCESSORS_ONLN) : 0)) * tick_ns);
	return 0;
}
