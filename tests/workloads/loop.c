// SPDX-License-Identifier: GPL-2.0
/* Test-only workload of tests/perf/test-record-deferred.sh: a known call path with frame pointers. */
volatile unsigned long sink;

__attribute__((noinline)) void deferred_test_leaf(void)
{
	for (unsigned long i = 0; i < 40000000; i++)
		sink += i;
}

__attribute__((noinline)) void deferred_test_middle(void)
{
	deferred_test_leaf();
	sink++;
}

int main(void)
{
	deferred_test_middle();
	return 0;
}
