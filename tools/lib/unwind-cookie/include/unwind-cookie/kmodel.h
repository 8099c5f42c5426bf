/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
#ifndef __LIBUNWIND_COOKIE_KMODEL_H
#define __LIBUNWIND_COOKIE_KMODEL_H

/*
 * A userspace model of the kernel's deferred user unwinding as merged for
 * 6.19 (kernel/unwind/deferred.c and its perf user): per-CPU cookie
 * counters, a cookie per kernel entry, one unwind shared by every registered
 * user, callbacks at return to user space and at exit. Driven by a scenario
 * (tasks entering and leaving the kernel, samples, migrations, execs, exits)
 * it logs the exact samples and PERF_RECORD_CALLCHAIN_DEFERRED records a
 * 6.19 kernel would write, each with the truth a test needs to check a
 * stitcher.
 *
 * This is the library's test and emulation API, not part of the stitching
 * API a tool needs: the library's own tests and perf stitch --emulate use
 * it. It is exported (its symbols are most of the ABI's) and kept stable
 * like the rest, but it follows the kernel it models: a change in the
 * kernel's behaviour may change what it logs.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <unwind-cookie/core.h>
#include <unwind-cookie/cookie.h>

#ifdef __cplusplus
extern "C" {
#endif

struct unwind_kmodel;

/* At most BITS_PER_LONG - 2 users, as in the kernel. */
#define UNWIND_KMODEL_MAX_USERS	62

enum unwind_kmodel_event_type {
	UNWIND_KMODEL_SAMPLE,	/* PERF_RECORD_SAMPLE with PERF_SAMPLE_CALLCHAIN */
	UNWIND_KMODEL_RECORD,	/* PERF_RECORD_CALLCHAIN_DEFERRED */
	UNWIND_KMODEL_EXEC,	/* PERF_RECORD_COMM with MISC_COMM_EXEC */
	UNWIND_KMODEL_EXIT,	/* PERF_RECORD_EXIT */
};

struct unwind_kmodel_event {
	enum unwind_kmodel_event_type	type;
	uint64_t			seq;	/* emission order, from 0 */
	uint32_t			pid;
	uint32_t			tid;
	uint32_t			cpu;	/* the buffer it is written to */
	uint64_t			time;
	uint64_t			id;	/* sampling event, or defer_output listener */
	/* Samples: the cookie at the end of the chain, 0 when none. Records: theirs. */
	uint64_t			cookie;
	/* Samples: the whole callchain as written. Records: the user ips. */
	uint64_t			*ips;
	size_t				nr;
	/*
	 * Samples only: the user chain the kernel unwound for this sample's
	 * cookie (truth_known; nr_truth 0 when the unwind failed and the
	 * record is empty), or why there is none (truth_known false: not
	 * deferred; the task exited with the work pending and no listener
	 * was left; or an exec in the same kernel entry separates the sample
	 * from the unwind, so the record shows another program's stack).
	 */
	bool				truth_known;
	uint64_t			*truth;
	size_t				nr_truth;
	bool				late;	/* taken after its record was written */
};

/* What a registered user's callback gets: the one shared unwind. */
struct unwind_kmodel_trace {
	const uint64_t	*ips;
	size_t		nr;	/* 0 when the unwind failed */
};

typedef void (*unwind_kmodel_callback_fn)(void *ctx, uint32_t tid,
					  const struct unwind_kmodel_trace *trace, uint64_t cookie);

struct unwind_kmodel_opts {
	size_t				sz;	/* sizeof(struct unwind_kmodel_opts) */
	uint32_t			nr_cpus;
	enum unwind_cookie_layout	layout;
	/* Per-CPU counter start (merged: made odd); tests use it to reach a wrap. */
	uint64_t			counter_start;
	/* perf's defer_output events: each gets its own copy of every record. */
	uint32_t			nr_listeners;
	/* id of the first listener; later ones follow. */
	uint64_t			first_listener_id;
};

LIBUNWIND_COOKIE_API struct unwind_kmodel *
unwind_kmodel__new(const struct unwind_kmodel_opts *opts);
LIBUNWIND_COOKIE_API void unwind_kmodel__delete(struct unwind_kmodel *km);

/*
 * unwind_deferred_init(): register a user. Returns its bit (>= 0), or
 * -EBUSY past UNWIND_KMODEL_MAX_USERS. The model's own perf user, which
 * writes the records, is registered by unwind_kmodel__new().
 */
LIBUNWIND_COOKIE_API int unwind_kmodel__user_register(struct unwind_kmodel *km,
						      unwind_kmodel_callback_fn fn, void *ctx);
LIBUNWIND_COOKIE_API int unwind_kmodel__user_unregister(struct unwind_kmodel *km, int user);

/*
 * unwind_deferred_request() for the task @tid on behalf of @user: *@cookie
 * gets the cookie of the current kernel entry. Returns 0 when the callback
 * was queued, 1 when it was already queued or already called in this
 * entry, -EINVAL for a kernel thread, an exiting task, a task not in the
 * kernel, or an unknown user; -ESRCH for an unknown tid.
 */
LIBUNWIND_COOKIE_API int unwind_kmodel__request(struct unwind_kmodel *km, uint32_t tid, int user,
						uint64_t *cookie);

enum unwind_kmodel_task_flags {
	UNWIND_KMODEL_KTHREAD	= 1 << 0,	/* PF_KTHREAD: never deferred */
};

/*
 * A task appears (fork/clone) in user mode on @cpu; a kernel thread appears,
 * and stays, in the kernel. -EEXIST if @tid lives (an exited tid may be reused).
 */
LIBUNWIND_COOKIE_API int unwind_kmodel__task_new(struct unwind_kmodel *km, uint32_t pid,
						 uint32_t tid, uint32_t cpu, unsigned int flags);
/* The user stack an unwind of @tid would find now; copied. */
LIBUNWIND_COOKIE_API int unwind_kmodel__task_set_user_stack(struct unwind_kmodel *km, uint32_t tid,
							    const uint64_t *ips, size_t nr);
/* Syscall, fault or interrupt from user mode. -EINVAL if already inside. */
LIBUNWIND_COOKIE_API int unwind_kmodel__task_enter(struct unwind_kmodel *km, uint32_t tid,
						   uint64_t time);
/* Scheduled on another CPU (only while in the kernel, as a real task). */
LIBUNWIND_COOKIE_API int unwind_kmodel__task_migrate(struct unwind_kmodel *km, uint32_t tid,
						     uint32_t cpu);
/*
 * The task_work on the way back to user space: one unwind, every pending
 * callback, records written on the current CPU at @time. The cookie stays
 * until unwind_kmodel__task_return(): samples taken in between are late.
 */
LIBUNWIND_COOKIE_API int unwind_kmodel__task_work(struct unwind_kmodel *km, uint32_t tid,
						  uint64_t time);
/* Return to user space: runs task_work if still pending, clears the cookie. */
LIBUNWIND_COOKIE_API int unwind_kmodel__task_return(struct unwind_kmodel *km, uint32_t tid,
						    uint64_t time);
/* exec from inside the kernel: new user stack, COMM_EXEC written at @time. */
LIBUNWIND_COOKIE_API int unwind_kmodel__task_exec(struct unwind_kmodel *km, uint32_t tid,
						  uint64_t time, const uint64_t *ips, size_t nr);
/*
 * do_exit(): PERF_RECORD_EXIT at @time, then the pending callbacks, whose
 * records (written if @records_reach_listener, the CPU-wide case) come
 * after it at @time + 1, as 7.2 writes them. The tid may then be reused
 * by unwind_kmodel__task_new().
 */
LIBUNWIND_COOKIE_API int unwind_kmodel__task_exit(struct unwind_kmodel *km, uint32_t tid,
						  uint64_t time, bool records_reach_listener);

/*
 * perf takes a sample of @tid on its current CPU at @time for event @id,
 * with kernel frames @kernel (without PERF_CONTEXT_KERNEL). In the kernel:
 * PERF_CONTEXT_KERNEL, k..., PERF_CONTEXT_USER_DEFERRED, cookie. With
 * @user_mode the task is in user space: an interrupt enters the kernel at
 * @time, the chain is PERF_CONTEXT_USER_DEFERRED, cookie, and the task
 * returns at @time + 1 writing its record. Kernel threads and exiting
 * tasks, and tasks in user space sampled without @user_mode, get the
 * kernel part only (nothing at all when @nr_kernel is 0). Returns the
 * event's index in the log.
 */
LIBUNWIND_COOKIE_API long unwind_kmodel__sample(struct unwind_kmodel *km, uint32_t tid,
						uint64_t time, uint64_t id, const uint64_t *kernel,
						size_t nr_kernel, bool user_mode);

/* The log so far. Valid until the next call that changes the model. */
LIBUNWIND_COOKIE_API const struct unwind_kmodel_event *
unwind_kmodel__events(const struct unwind_kmodel *km, size_t *nr);

/*
 * The order perf record writes the log in: time is cut into rounds of
 * @round; each round writes CPU 0's buffer, then CPU 1's, ... each in
 * emission order. Fills @order (nr entries) with log indices.
 */
LIBUNWIND_COOKIE_API int unwind_kmodel__file_order(const struct unwind_kmodel *km, uint64_t round,
						   size_t *order, size_t nr);

/* Unwinds performed so far (one per kernel entry that requested one). */
LIBUNWIND_COOKIE_API uint64_t unwind_kmodel__nr_unwinds(const struct unwind_kmodel *km);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* __LIBUNWIND_COOKIE_KMODEL_H */
