// SPDX-License-Identifier: GPL-2.0
/*
 * Test binary for tests/perf/test-scenarios.sh.
 *
 * The scenario files are generated, not recorded, but their user ips point
 * into this binary, so perf symbolizes them from its symbol table: every
 * function here has a distinctive name, is not inlined and keeps its frame
 * pointer, and the binary is linked without PIE so that the addresses `nm`
 * prints are the run-time addresses.  Build:
 *
 *	gcc -O0 -g -fno-omit-frame-pointer -fno-inline -no-pie -pthread \
 *	    -o workload workload.c
 *
 * It also runs, and then makes the stacks the scenarios pretend to have
 * sampled (e.g. perf record --call-graph fp -- ./workload):
 *
 *	main -> outer -> middle -> leaf            (syscalls in a loop)
 *	thread_main -> worker_loop -> worker_leaf   (second thread)
 *	main -> reborn                             (after re-exec: ./workload reborn)
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define ITERATIONS 20000

volatile unsigned long sink;

__attribute__((noinline)) void leaf(void)
{
	for (int i = 0; i < ITERATIONS; i++)
		sink += getppid();
}

__attribute__((noinline)) void middle(void)
{
	leaf();
	sink++;
}

__attribute__((noinline)) void outer(void)
{
	middle();
	sink++;
}

__attribute__((noinline)) void worker_leaf(void)
{
	for (int i = 0; i < ITERATIONS; i++)
		sink += getpid();
}

__attribute__((noinline)) void worker_loop(void)
{
	worker_leaf();
	sink++;
}

__attribute__((noinline)) void *thread_main(void *arg)
{
	worker_loop();
	return arg;
}

__attribute__((noinline)) void reborn(void)
{
	for (int i = 0; i < ITERATIONS; i++)
		sink += getppid();
}

int main(int argc, char **argv)
{
	pthread_t th;

	if (argc > 1 && !strcmp(argv[1], "reborn")) {
		reborn();
		return 0;
	}
	if (pthread_create(&th, NULL, thread_main, NULL))
		return 1;
	outer();
	pthread_join(th, NULL);
	if (argc > 1 && !strcmp(argv[1], "exec")) {
		execl("/proc/self/exe", argv[0], "reborn", (char *)NULL);
		perror("execl");
		return 1;
	}
	return 0;
}
