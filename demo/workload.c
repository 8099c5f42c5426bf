// SPDX-License-Identifier: GPL-2.0
/*
 * The workload 'make demo' profiles: four threads, each with its own call
 * path and its own way into the kernel, so that the flame graph shows user
 * stacks joined to kernel stacks of every common kind.
 *
 *   demo-io      io_thread -> io_copy_blocks -> io_read_block / io_write_block
 *                / io_ask_pid: read(2) from /dev/zero, write(2) to /dev/null,
 *                getpid(2)
 *   demo-faults  fault_thread -> fault_map_region -> fault_touch_pages: page
 *                faults on fresh anonymous pages, then munmap(2)
 *   demo-sleeper sleep_thread -> sleep_nap (nanosleep(2)) and
 *                sleep_spin_work (user-space arithmetic)
 *   demo-hopper  hop_thread -> hop_to_next_cpu (sched_setaffinity(2) to the
 *                next allowed CPU: migrations) and hop_crunch
 *
 * Deferred user callchains are frame pointer walks, so every function
 * here needs a frame: built with -O0 -fno-omit-frame-pointer, because
 * GCC 12 at -O1 and above sets up no frame in leaf functions even with
 * -mno-omit-leaf-frame-pointer, and a leaf without a frame hides its
 * caller.  The system calls are issued from these functions themselves
 * (inline "syscall" on x86-64) rather than through libc, whose wrappers
 * have no frame pointer and would hide the function that called them.
 *
 * usage: workload [SECONDS]     (default 1.5; every thread stops then)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#if defined(__clang__)
#define noinline __attribute__((noinline))
#else
/* no clones either (fault_touch_pages.constprop.0): exact names in the graph */
#define noinline __attribute__((noipa))
#endif
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

#define IO_BLOCK	(128 * 1024)
#define FAULT_REGION	(4 * 1024 * 1024)
#define SLEEP_NS	200000L

static struct timespec deadline;
static cpu_set_t allowed_cpus;
/* results the compiler must not drop (volatile: the loops are the point) */
static volatile unsigned long sink;

/*
 * Inlined even at -O0 (glibc's __always_inline): the system call belongs
 * to the function that asks for it.
 */
static __always_inline long sys3(long nr, long a, long b, long c)
{
#if defined(__x86_64__)
	long ret;

	asm volatile ("syscall"
		      : "=a" (ret)
		      : "a" (nr), "D" (a), "S" (b), "d" (c)
		      : "rcx", "r11", "memory");
	return ret;
#else
	return syscall(nr, a, b, c);
#endif
}

static int past_deadline(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > deadline.tv_sec ||
	       (now.tv_sec == deadline.tv_sec && now.tv_nsec >= deadline.tv_nsec);
}

/* the thread's comm, so that the flame graph groups by it from the start */
static void name_thread(const char *name)
{
	prctl(PR_SET_NAME, (unsigned long)name, 0, 0, 0);
}

static void die(const char *what)
{
	fprintf(stderr, "workload: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* ---- demo-io: read, write, getpid */

static noinline long io_read_block(int fd, char *buf)
{
	return sys3(SYS_read, fd, (long)buf, IO_BLOCK);
}

static noinline long io_write_block(int fd, const char *buf)
{
	return sys3(SYS_write, fd, (long)buf, IO_BLOCK);
}

static noinline long io_ask_pid(void)
{
	return sys3(SYS_getpid, 0, 0, 0);
}

static noinline void io_copy_blocks(int in, int out, char *buf)
{
	int i;

	for (i = 0; i < 16; i++) {
		if (io_read_block(in, buf) != IO_BLOCK)
			die("read /dev/zero");
		if (io_write_block(out, buf) != IO_BLOCK)
			die("write /dev/null");
		sink += io_ask_pid();
	}
}

static noinline void *io_thread(void *name)
{
	char *buf = malloc(IO_BLOCK);
	int in = open("/dev/zero", O_RDONLY);
	int out = open("/dev/null", O_WRONLY);

	name_thread(name);
	if (!buf || in < 0 || out < 0)
		die("io setup");
	while (!past_deadline())
		io_copy_blocks(in, out, buf);
	close(in);
	close(out);
	free(buf);
	return NULL;
}

/* ---- demo-faults: first touch of fresh anonymous pages */

static noinline void fault_touch_pages(char *region, size_t size, size_t page)
{
	size_t off;

	for (off = 0; off < size; off += page)
		region[off] = (char)off;
}

static noinline void fault_map_region(size_t page)
{
	char *region = mmap(NULL, FAULT_REGION, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (region == MAP_FAILED)
		die("mmap");
	fault_touch_pages(region, FAULT_REGION, page);
	sink += region[page];
	if (sys3(SYS_munmap, (long)region, FAULT_REGION, 0))
		die("munmap");
}

static noinline void *fault_thread(void *name)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	name_thread(name);
	while (!past_deadline())
		fault_map_region(page);
	return NULL;
}

/* ---- demo-sleeper: short sleeps between bursts of user work */

static noinline void sleep_nap(void)
{
	struct timespec nap = { .tv_sec = 0, .tv_nsec = SLEEP_NS };

	sys3(SYS_nanosleep, (long)&nap, 0, 0);
}

static noinline unsigned long sleep_spin_work(unsigned long seed)
{
	int i;

	for (i = 0; i < 200000; i++)
		seed = seed * 6364136223846793005UL + 1442695040888963407UL;
	return seed;
}

static noinline void *sleep_thread(void *name)
{
	unsigned long seed = 1;

	name_thread(name);
	while (!past_deadline()) {
		sleep_nap();
		seed = sleep_spin_work(seed);
	}
	sink += seed;
	return NULL;
}

/* ---- demo-hopper: move to the next allowed CPU, work there */

static noinline int hop_to_next_cpu(int cpu)
{
	cpu_set_t one;
	int next = cpu;

	do {
		next = (next + 1) % CPU_SETSIZE;
	} while (!CPU_ISSET(next, &allowed_cpus));
	CPU_ZERO(&one);
	CPU_SET(next, &one);
	if (sys3(SYS_sched_setaffinity, 0, sizeof(one), (long)&one))
		die("sched_setaffinity");
	return next;
}

static noinline unsigned long hop_crunch(unsigned long seed)
{
	int i;

	for (i = 0; i < 100000; i++) {
		seed ^= seed << 13;
		seed ^= seed >> 7;
		seed ^= seed << 17;
	}
	return seed + sys3(SYS_getppid, 0, 0, 0);
}

static noinline void *hop_thread(void *name)
{
	unsigned long seed = 88172645463325252UL;
	int cpu = 0;

	name_thread(name);
	while (!past_deadline()) {
		cpu = hop_to_next_cpu(cpu);
		seed = hop_crunch(seed);
	}
	sink += seed;
	return NULL;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		void *(*fn)(void *name);
	} threads[] = {
		{ "demo-io", io_thread },
		{ "demo-faults", fault_thread },
		{ "demo-sleeper", sleep_thread },
		{ "demo-hopper", hop_thread },
	};
	pthread_t tid[ARRAY_SIZE(threads)];
	double seconds = argc > 1 ? strtod(argv[1], NULL) : 1.5;
	unsigned int i;

	if (argc > 2 || !(seconds > 0 && seconds <= 60)) {
		fprintf(stderr, "usage: workload [SECONDS]   (0 < SECONDS <= 60)\n");
		return 2;
	}
	if (sched_getaffinity(0, sizeof(allowed_cpus), &allowed_cpus))
		die("sched_getaffinity");
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += (time_t)seconds;
	deadline.tv_nsec += (long)((seconds - (time_t)seconds) * 1e9);
	if (deadline.tv_nsec >= 1000000000L) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000L;
	}
	for (i = 0; i < ARRAY_SIZE(threads); i++) {
		errno = pthread_create(&tid[i], NULL, threads[i].fn, (void *)threads[i].name);
		if (errno)
			die("pthread_create");
	}
	for (i = 0; i < ARRAY_SIZE(threads); i++)
		pthread_join(tid[i], NULL);
	return 0;
}
