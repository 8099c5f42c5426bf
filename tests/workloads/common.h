/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Shared helpers of the VM workloads: wall-clock deadlines and a compute
 * kernel with a few distinct, non-inlined frames, so that the user stacks
 * the kernel unwinds (frame pointers: build with -fno-omit-frame-pointer)
 * have a recognisable shape.
 */
#ifndef VM_WORKLOAD_COMMON_H
#define VM_WORKLOAD_COMMON_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#define NOINLINE __attribute__((noinline, unused))

static inline double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* sleep s seconds (nothing when s <= 0: the guest may be late already) */
static inline void sleep_s(double s)
{
	struct timespec ts;

	if (s <= 0)
		return;
	ts.tv_sec = (time_t)s;
	ts.tv_nsec = (long)((s - (time_t)s) * 1e9);
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static volatile uint64_t sink;

static NOINLINE uint64_t spin_leaf(uint64_t x, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	return x;
}

static NOINLINE uint64_t spin_mid(uint64_t x, unsigned n)
{
	x = spin_leaf(x, n / 2);
	return spin_leaf(x ^ 0x9e3779b97f4a7c15ULL, n - n / 2);
}

/* about n multiply-adds in three frames: compute -> spin_mid -> spin_leaf */
static NOINLINE void compute(unsigned n)
{
	sink += spin_mid(sink + n, n);
}

/* compute until `seconds` of wall time have passed */
static NOINLINE void compute_for(double seconds)
{
	double end = now_s() + seconds;

	while (now_s() < end)
		compute(20000);
}

#endif
