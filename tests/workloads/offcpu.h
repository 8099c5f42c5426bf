/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * What the off-CPU workloads (offcpu.c, server.c) share: the blocking
 * calls, each in a frame a frame pointer walk keeps, and each workload's
 * own clock of its time off CPU, the reference the off-CPU profiles are
 * held to.  Each blocking function's time off CPU is its wall time minus
 * its thread's CPU time (CLOCK_THREAD_CPUTIME_ID) around each call of it,
 * read in its caller:
 * the thread CPU clock (a system call, where a preemption is taken on the
 * way out) outside the wall clock's readings, so that a preemption the
 * window does not count has no frame of the function in its stack either.
 */
#ifndef VM_WORKLOAD_OFFCPU_H
#define VM_WORKLOAD_OFFCPU_H

#include <linux/futex.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

struct offcpu_total {
	const char	*name;
	uint64_t	ns;
	uint64_t	calls;
	/* its thread: tid and wall time from start to end */
	int		tid;
	uint64_t	wall_ns;
};

static inline uint64_t ns_of(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/*
 * Wall minus thread CPU time since the snapshot: the time off CPU.  Read
 * in the caller of a block_* function: CPU clock first and last, the wall
 * clock (the vDSO, no system call) inside.
 */
struct off_clock {
	uint64_t wall, cpu;
};

static inline __attribute__((always_inline)) struct off_clock off_start(void)
{
	struct off_clock c;

	c.cpu = ns_of(CLOCK_THREAD_CPUTIME_ID);
	c.wall = ns_of(CLOCK_MONOTONIC);
	return c;
}

static inline __attribute__((always_inline)) void off_end(struct off_clock c,
							   struct offcpu_total *t)
{
	uint64_t wall = ns_of(CLOCK_MONOTONIC) - c.wall;
	uint64_t cpu = ns_of(CLOCK_THREAD_CPUTIME_ID) - c.cpu;

	t->ns += wall > cpu ? wall - cpu : 0;
	t->calls++;
}

/* the call of a block_* function, timed */
#define TIMED(t, call) ({					\
	struct off_clock timed_clock = off_start();		\
	int timed_ret = (call);					\
								\
	off_end(timed_clock, t);				\
	timed_ret;						\
})

/* the thread's tid and wall time, for --count=wall */
static inline uint64_t thread_start(struct offcpu_total *t)
{
	t->tid = (int)syscall(SYS_gettid);
	return ns_of(CLOCK_MONOTONIC);
}

static inline void thread_end(struct offcpu_total *t, uint64_t start)
{
	t->wall_ns = ns_of(CLOCK_MONOTONIC) - start;
}

/*
 * The C library is built without frame pointers: a frame pointer walk from
 * inside it skips the function that called it, whose frame pointer it left
 * in place.  Each blocking call goes through one of these, skipped instead.
 */
static NOINLINE int call_nanosleep(const struct timespec *ts)
{
	int ret = nanosleep(ts, NULL);

	sink++;
	return ret;
}

static NOINLINE ssize_t call_read(int fd, void *buf, size_t n)
{
	ssize_t ret = read(fd, buf, n);

	sink++;
	return ret;
}

static NOINLINE long call_futex_wait(uint32_t *word, uint32_t seen)
{
	long ret = syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, seen, NULL, NULL, 0);

	sink++;
	return ret;
}

#endif
