// SPDX-License-Identifier: GPL-2.0
/*
 * Workload for tests/perf/test-emulate.sh: frame pointers (build with
 * -fno-omit-frame-pointer), system calls, page faults, sleeps, user time,
 * several threads, and one thread moved between CPUs while it is inside
 * long read()s, so that kernel entries end on another CPU than they began.
 * Runs for about @argv[1] milliseconds (default 400).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define NR_THREADS	3
#define noinline	__attribute__((noinline))

unsigned long sink;	/* global: the work is not optimised away */
static long run_ms = 400;

static unsigned long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000UL + ts.tv_nsec / 1000000;
}

static noinline unsigned long spin(int depth, unsigned long n)
{
	unsigned long i, x = depth;

	if (depth > 0)
		return spin(depth - 1, n) + 1;
	for (i = 0; i < n; i++)
		x = x * 2862933555777941757UL + 3037000493UL;
	return x;
}

static char big[1 << 20];

/* short ones, and reads long enough to take several samples */
static noinline void do_syscalls(int fd, int zero, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		if (write(fd, big, 4096) < 0)
			break;
		getppid();
	}
	if (read(zero, big, sizeof(big)) < 0)
		sink++;
}

static noinline void do_faults(int pages)
{
	long psz = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, pages * psz, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int i;

	if (p == MAP_FAILED)
		return;
	for (i = 0; i < pages; i++)
		p[i * psz] = (char)i;
	munmap(p, pages * psz);
}

static noinline void do_sleep(long us)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = us * 1000 };

	nanosleep(&ts, NULL);
}

static noinline void work_step(int fd, int zero, int id)
{
	sink += spin(3 + id, 300000);
	do_syscalls(fd, zero, 10);
	do_faults(16);
	do_sleep(200 + 100 * id);
}

static void *worker(void *arg)
{
	int id = (int)(long)arg;
	unsigned long end = now_ms() + run_ms;
	int fd = open("/dev/null", O_WRONLY);
	int zero = open("/dev/zero", O_RDONLY);

	while (now_ms() < end)
		work_step(fd, zero, id);
	close(zero);
	close(fd);
	return NULL;
}

static pid_t mover_tid;
static int mover_done;

static noinline void long_read(int zero, char *buf, size_t size)
{
	if (read(zero, buf, size) < 0)
		sink++;
}

static void *mover(void *arg)
{
	size_t size = 8 << 20;
	char *buf = malloc(size);
	unsigned long end = now_ms() + run_ms;
	int zero = open("/dev/zero", O_RDONLY);

	(void)arg;
	__atomic_store_n(&mover_tid, syscall(SYS_gettid), __ATOMIC_RELAXED);
	while (buf && now_ms() < end)
		long_read(zero, buf, size);
	__atomic_store_n(&mover_done, 1, __ATOMIC_RELAXED);
	close(zero);
	free(buf);
	return NULL;
}

/* moves the mover to the other CPU every millisecond */
static void move_mover(void)
{
	long nr = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t set;
	int cpu = 0;

	while (!__atomic_load_n(&mover_done, __ATOMIC_RELAXED)) {
		pid_t tid = __atomic_load_n(&mover_tid, __ATOMIC_RELAXED);

		if (tid && nr > 1) {
			CPU_ZERO(&set);
			CPU_SET(cpu, &set);
			sched_setaffinity(tid, sizeof(set), &set);
			cpu = (cpu + 1) % 2;
		}
		do_sleep(1000);
	}
}

int main(int argc, char **argv)
{
	pthread_t th[NR_THREADS], mv;
	long i;

	if (argc > 1)
		run_ms = atol(argv[1]);
	for (i = 0; i < NR_THREADS; i++)
		pthread_create(&th[i], NULL, worker, (void *)i);
	pthread_create(&mv, NULL, mover, NULL);
	move_mover();
	pthread_join(mv, NULL);
	for (i = 0; i < NR_THREADS; i++)
		pthread_join(th[i], NULL);
	return 0;
}
