// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The cookie of Linux 6.19's deferred user unwinding (kernel/unwind/deferred.c):
 *
 *	union unwind_task_id { struct { u32 cpu; u32 cnt; }; u64 id; };
 *
 * cpu is smp_processor_id() + 1 so that no cookie is 0, and cnt is a per-CPU
 * counter advanced by 2 with its low bit set. Which half ends up high in the
 * u64 depends on the producing host's byte order, not on the reader's.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <unwind-cookie/cookie.h>

#define SEED_CPU_SHIFT		48
#define SEED_COUNTER_MASK	((1ULL << SEED_CPU_SHIFT) - 1)
#define SEED_MAX_CPUS		(1U << (64 - SEED_CPU_SHIFT))

static const char * const layout_names[UNWIND_COOKIE_LAYOUT__MAX] = {
	[UNWIND_COOKIE_LAYOUT_MERGED_LE]	= "merged-le",
	[UNWIND_COOKIE_LAYOUT_MERGED_BE]	= "merged-be",
	[UNWIND_COOKIE_LAYOUT_SEED]		= "seed",
};

const char *unwind_cookie__layout_name(enum unwind_cookie_layout layout)
{
	/* Compare as unsigned: a caller may cast any int into the enum. */
	if ((unsigned int)layout >= UNWIND_COOKIE_LAYOUT__MAX)
		return NULL;
	return layout_names[layout];
}

/* Put the two u32 halves where the producing host's union puts them. */
static uint64_t merged_join(enum unwind_cookie_layout layout, uint32_t cpu1, uint32_t cnt)
{
	if (layout == UNWIND_COOKIE_LAYOUT_MERGED_LE)
		return (uint64_t)cnt << 32 | cpu1;
	return (uint64_t)cpu1 << 32 | cnt;
}

int unwind_cookie__encode(enum unwind_cookie_layout layout, uint32_t cpu, uint64_t counter,
			  uint64_t *cookie)
{
	uint64_t val;

	if (!cookie)
		return -EINVAL;

	switch (layout) {
	case UNWIND_COOKIE_LAYOUT_MERGED_LE:
	case UNWIND_COOKIE_LAYOUT_MERGED_BE:
		/*
		 * The kernel stores cpu + 1, so UINT32_MAX has no encoding;
		 * an even counter is one the kernel never hands out.
		 */
		if (cpu == UINT32_MAX || counter > UINT32_MAX || !(counter & 1))
			return -EINVAL;
		val = merged_join(layout, cpu + 1, (uint32_t)counter);
		break;
	case UNWIND_COOKIE_LAYOUT_SEED:
		if (cpu >= SEED_MAX_CPUS || counter > SEED_COUNTER_MASK)
			return -EINVAL;
		val = (uint64_t)cpu << SEED_CPU_SHIFT | counter;
		/* CPU 0, counter 0 would be the "no cookie" value. */
		if (!val)
			return -EINVAL;
		break;
	case UNWIND_COOKIE_LAYOUT__MAX:
	default:
		return -EINVAL;
	}

	*cookie = val;
	return 0;
}

int unwind_cookie__decode(enum unwind_cookie_layout layout, uint64_t cookie,
			  struct unwind_cookie_fields *fields)
{
	uint32_t cpu1, cnt;

	/* 0 is what a chain without a cookie would carry, in every layout. */
	if (!cookie)
		return -EINVAL;

	switch (layout) {
	case UNWIND_COOKIE_LAYOUT_MERGED_LE:
		cnt = (uint32_t)(cookie >> 32);
		cpu1 = (uint32_t)cookie;
		break;
	case UNWIND_COOKIE_LAYOUT_MERGED_BE:
		cpu1 = (uint32_t)(cookie >> 32);
		cnt = (uint32_t)cookie;
		break;
	case UNWIND_COOKIE_LAYOUT_SEED:
		if (fields) {
			fields->cpu = (uint32_t)(cookie >> SEED_CPU_SHIFT);
			fields->counter = cookie & SEED_COUNTER_MASK;
		}
		return 0;
	case UNWIND_COOKIE_LAYOUT__MAX:
	default:
		return -EINVAL;
	}

	/*
	 * A zero cpu + 1 half or an even counter cannot come from the kernel:
	 * most likely the cookie was decoded with the other byte order.
	 */
	if (!cpu1 || !(cnt & 1))
		return -EINVAL;

	if (fields) {
		fields->cpu = cpu1 - 1;
		fields->counter = cnt;
	}
	return 0;
}

bool unwind_cookie__valid(enum unwind_cookie_layout layout, uint64_t cookie)
{
	return unwind_cookie__decode(layout, cookie, NULL) == 0;
}
