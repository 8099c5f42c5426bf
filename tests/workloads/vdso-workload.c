// SPDX-License-Identifier: GPL-2.0
/*
 * vdso-workload MS: spends MS milliseconds calling the vdso's
 * clock_gettime() and time(), whose coarse clocks never leave it for the
 * kernel: nearly every sample lands in the vdso (tests/perf/test-top.sh).
 */
#include <stdlib.h>
#include <time.h>

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

int main(int argc, char **argv)
{
	long long end = now_ms() + (argc > 1 ? atoll(argv[1]) : 1000);
	volatile long sum = 0;

	while (now_ms() < end)
		for (int i = 0; i < 10000; i++)
			sum += time(NULL);
	return 0;
}
