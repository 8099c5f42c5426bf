// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Size-class free lists for the engine's short-lived objects; see
 * include/internal/pool.h.  Class c holds objects of (c - 1) * GRAIN + 1
 * to c * GRAIN bytes, all allocated at c * GRAIN so that any of them fits
 * any request of its class.
 */
#include <stdlib.h>
#include <internal/pool.h>

struct free_obj {
	struct free_obj *next;
};

static size_t pool_class(size_t size)
{
	return size ? (size + UC_POOL_GRAIN - 1) / UC_POOL_GRAIN : 1;
}

void *uc_pool__alloc(struct uc_pool *pool, size_t size)
{
	size_t c = pool_class(size);
	struct free_obj *obj;

	if (c > UC_POOL_CLASSES)
		return malloc(size);
	obj = pool->free[c];
	if (!obj)
		return malloc(c * UC_POOL_GRAIN);
	pool->free[c] = obj->next;
	pool->cached -= c * UC_POOL_GRAIN;
	return obj;
}

void uc_pool__free(struct uc_pool *pool, void *obj, size_t size)
{
	size_t c = pool_class(size);
	struct free_obj *f = obj;

	if (!obj)
		return;
	if (c > UC_POOL_CLASSES || pool->cached + c * UC_POOL_GRAIN > UC_POOL_MAX_CACHED) {
		free(obj);
		return;
	}
	f->next = pool->free[c];
	pool->free[c] = f;
	pool->cached += c * UC_POOL_GRAIN;
}

void uc_pool__clear(struct uc_pool *pool)
{
	size_t c;

	for (c = 1; c <= UC_POOL_CLASSES; c++) {
		while (pool->free[c]) {
			struct free_obj *f = pool->free[c];

			pool->free[c] = f->next;
			free(f);
		}
	}
	pool->cached = 0;
}
