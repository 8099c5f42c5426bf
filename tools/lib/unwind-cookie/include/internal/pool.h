/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
#ifndef __LIBUNWIND_COOKIE_INTERNAL_POOL_H
#define __LIBUNWIND_COOKIE_INTERNAL_POOL_H

#include <stddef.h>

/*
 * Freed objects kept for reuse, by size class: the engine allocates and
 * frees a slot, a record and a sample or two for every kernel entry, and
 * malloc() and free() were a third of its instructions.  Objects of up to
 * UC_POOL_CLASSES * UC_POOL_GRAIN bytes are served from the lists; larger
 * ones, and frees past UC_POOL_MAX_CACHED bytes kept, go to malloc().
 * The caller passes the size it allocated with back to uc_pool__free().
 */
#define UC_POOL_GRAIN		32
#define UC_POOL_CLASSES		64
#define UC_POOL_MAX_CACHED	(1U << 20)

struct uc_pool {
	void	*free[UC_POOL_CLASSES + 1];
	size_t	cached;		/* bytes on the lists */
};

void *uc_pool__alloc(struct uc_pool *pool, size_t size);
void uc_pool__free(struct uc_pool *pool, void *obj, size_t size);
/* Gives every cached object back to malloc(). */
void uc_pool__clear(struct uc_pool *pool);

#endif /* __LIBUNWIND_COOKIE_INTERNAL_POOL_H */
