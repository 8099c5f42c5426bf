/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
#ifndef __LIBUNWIND_COOKIE_INTERNAL_LIST_H
#define __LIBUNWIND_COOKIE_INTERNAL_LIST_H

#include <stdbool.h>
#include <stddef.h>

/* A minimal circular doubly linked list, as in the kernel's list.h. */
struct uc_list {
	struct uc_list *prev, *next;
};

#define uc_container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

static inline void uc_list_init(struct uc_list *head)
{
	head->prev = head;
	head->next = head;
}

static inline bool uc_list_empty(const struct uc_list *head)
{
	return head->next == head;
}

/* An unlinked node points at itself, so removal is idempotent. */
static inline bool uc_list_linked(const struct uc_list *node)
{
	return node->next != node;
}

static inline void uc_list_add_tail(struct uc_list *node, struct uc_list *head)
{
	node->prev = head->prev;
	node->next = head;
	head->prev->next = node;
	head->prev = node;
}

static inline void uc_list_del(struct uc_list *node)
{
	node->prev->next = node->next;
	node->next->prev = node->prev;
	uc_list_init(node);
}

#endif /* __LIBUNWIND_COOKIE_INTERNAL_LIST_H */
