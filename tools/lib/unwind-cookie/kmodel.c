// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * A userspace model of the deferred user unwinding merged for Linux 6.19
 * (kernel/unwind/deferred.c) and of its perf user.
 *
 * Per task it keeps what struct unwind_task_info keeps: the cookie of the
 * current kernel entry (assigned lazily, cleared at return to user space),
 * the mask of users whose callback is queued (pending) and of users already
 * called in this entry (called; the kernel keeps both in one unwind_mask plus
 * cache->unwind_completed), whether the task_work is queued (UNWIND_PENDING),
 * and the cached unwind shared by every callback of the entry.
 *
 * The model's own perf user (bit 0, registered by unwind_kmodel__new()) is
 * what perf's defer_callchain events use: sample() requests on its behalf and
 * its callback writes one PERF_RECORD_CALLCHAIN_DEFERRED per defer_output
 * listener.
 *
 * Truth. A sample's truth is the user chain in the record written for its
 * cookie, when that record is the stack the sample really interrupted:
 *  - samples waiting for their record are kept in a per-task list (log
 *    indices), filled when the perf callback runs: no walk over the log;
 *  - a late sample (taken after its record was written, same entry) gets the
 *    entry's cached unwind at once, and late = true;
 *  - an unwind that found nothing (empty user stack) is still a record:
 *    truth_known = true with nr_truth = 0;
 *  - exec: the unwind runs at task_work time and sees the user stack of that
 *    moment. A record written after an exec in the same entry carries the
 *    new program's stack, which is not what a sample taken before the exec
 *    interrupted; such samples keep truth_known = false (a stitcher must
 *    orphan them). The same holds the other way round for a late sample
 *    taken after an exec that followed the unwind. Samples and the unwind
 *    are compared by an exec generation counter;
 *  - a task exiting with the work pending and records_reach_listener false:
 *    no record, truth_known = false;
 *  - samples of kernel threads, exiting tasks and tasks not in the kernel
 *    are not deferred: cookie 0, truth_known = false.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unwind-cookie/kmodel.h>
#include <unwind-cookie/cookie.h>
#include <internal/lib.h>

#define offsetofend(type, member) (offsetof(type, member) + sizeof(((type *)0)->member))

/* The smallest opts a caller may pass: the fields of the first version. */
#define KMODEL_OPTS_MIN_SZ	offsetofend(struct unwind_kmodel_opts, first_listener_id)

#define SEED_COUNTER_MASK	((1ULL << 48) - 1)
#define SEED_MAX_CPUS		65536U

struct kmodel_user {
	unwind_kmodel_callback_fn	fn;
	void				*ctx;
};

/* A sample waiting for its record. */
struct truth_wait {
	size_t		idx;		/* in the log */
	uint64_t	exec_gen;	/* task's exec generation when taken */
};

struct ktask {
	struct ktask	*next;		/* hash chain */
	uint32_t	pid;
	uint32_t	tid;
	uint32_t	cpu;
	unsigned int	flags;
	bool		in_kernel;
	bool		exiting;

	/* What an unwind would find now. */
	uint64_t	*stack;
	size_t		nr_stack;
	uint64_t	exec_gen;

	/* The current kernel entry. */
	uint64_t	cookie;		/* 0: none assigned yet */
	uint64_t	pending;	/* users whose callback is queued */
	uint64_t	called;		/* users already called */
	bool		work_queued;	/* UNWIND_PENDING */
	bool		cache_valid;	/* the entry's one unwind was done */
	uint64_t	*cache;
	size_t		nr_cache;
	uint64_t	cache_gen;	/* exec_gen at the unwind */

	struct truth_wait *waits;
	size_t		nr_waits;
	size_t		cap_waits;
};

struct unwind_kmodel {
	uint32_t			nr_cpus;
	enum unwind_cookie_layout	layout;
	uint32_t			nr_listeners;
	uint64_t			first_listener_id;
	uint64_t			*counters;	/* per CPU: next counter value */

	uint64_t			users_mask;
	struct kmodel_user		users[UNWIND_KMODEL_MAX_USERS];
	int				perf_user;

	struct ktask			**buckets;
	size_t				nr_buckets;	/* power of two */
	size_t				nr_tasks;

	struct unwind_kmodel_event	*events;
	size_t				nr_events;
	size_t				cap_events;

	uint64_t			nr_unwinds;

	/* While callbacks run: the model refuses to be changed. */
	bool				in_callback;
	struct ktask			*cb_task;
	uint64_t			cb_time;
	bool				cb_records;
	int				cb_err;
};

static bool layout_merged(enum unwind_cookie_layout layout)
{
	return layout == UNWIND_COOKIE_LAYOUT_MERGED_LE || layout == UNWIND_COOKIE_LAYOUT_MERGED_BE;
}

static uint64_t *dup_ips(const uint64_t *ips, size_t nr, int *err)
{
	uint64_t *copy;

	*err = 0;
	if (!nr)
		return NULL;
	if (nr > SIZE_MAX / sizeof(*ips)) {
		*err = -ENOMEM;
		return NULL;
	}
	copy = malloc(nr * sizeof(*ips));
	if (!copy) {
		*err = -ENOMEM;
		return NULL;
	}
	memcpy(copy, ips, nr * sizeof(*ips));
	return copy;
}

/* ---- tasks ---- */

static size_t tid_hash(const struct unwind_kmodel *km, uint32_t tid)
{
	return (size_t)((tid * 2654435761U) & (km->nr_buckets - 1));
}

static struct ktask *task_find(const struct unwind_kmodel *km, uint32_t tid)
{
	struct ktask *t;

	for (t = km->buckets[tid_hash(km, tid)]; t; t = t->next)
		if (t->tid == tid)
			return t;
	return NULL;
}

static void task_free(struct ktask *t)
{
	free(t->stack);
	free(t->cache);
	free(t->waits);
	free(t);
}

static void task_unlink(struct unwind_kmodel *km, struct ktask *t)
{
	struct ktask **p;

	for (p = &km->buckets[tid_hash(km, t->tid)]; *p; p = &(*p)->next) {
		if (*p == t) {
			*p = t->next;
			km->nr_tasks--;
			return;
		}
	}
}

static int tasks_grow(struct unwind_kmodel *km)
{
	size_t nr = km->nr_buckets * 2, i;
	struct ktask **old = km->buckets, **nb;
	size_t old_nr = km->nr_buckets;

	nb = calloc(nr, sizeof(*nb));
	if (!nb)
		return -ENOMEM;
	km->buckets = nb;
	km->nr_buckets = nr;
	for (i = 0; i < old_nr; i++) {
		struct ktask *t = old[i], *next;

		for (; t; t = next) {
			size_t h = tid_hash(km, t->tid);

			next = t->next;
			t->next = nb[h];
			nb[h] = t;
		}
	}
	free(old);
	return 0;
}

static void task_insert(struct unwind_kmodel *km, struct ktask *t)
{
	size_t h;

	/* Growing is an optimisation: a failure only keeps chains longer. */
	if (km->nr_tasks >= km->nr_buckets * 2)
		tasks_grow(km);
	h = tid_hash(km, t->tid);
	t->next = km->buckets[h];
	km->buckets[h] = t;
	km->nr_tasks++;
}

/* Forget the current kernel entry (unwind_reset_info()). */
static void task_reset_entry(struct ktask *t)
{
	t->cookie = 0;
	t->pending = 0;
	t->called = 0;
	t->work_queued = false;
	t->cache_valid = false;
	free(t->cache);
	t->cache = NULL;
	t->nr_cache = 0;
	t->nr_waits = 0;
}

static int waits_reserve(struct ktask *t)
{
	struct truth_wait *w;
	size_t cap;

	if (t->nr_waits < t->cap_waits)
		return 0;
	cap = t->cap_waits ? t->cap_waits * 2 : 8;
	w = realloc(t->waits, cap * sizeof(*w));
	if (!w)
		return -ENOMEM;
	t->waits = w;
	t->cap_waits = cap;
	return 0;
}

/* ---- the log ---- */

static int log_reserve(struct unwind_kmodel *km, size_t n)
{
	struct unwind_kmodel_event *ev;
	size_t cap;

	if (km->cap_events - km->nr_events >= n)
		return 0;
	cap = km->cap_events ? km->cap_events : 64;
	while (cap - km->nr_events < n) {
		if (cap > SIZE_MAX / 2 / sizeof(*ev))
			return -ENOMEM;
		cap *= 2;
	}
	ev = realloc(km->events, cap * sizeof(*ev));
	if (!ev)
		return -ENOMEM;
	km->events = ev;
	km->cap_events = cap;
	return 0;
}

/* Room must have been reserved. */
static struct unwind_kmodel_event *log_append(struct unwind_kmodel *km,
					      enum unwind_kmodel_event_type type,
					      const struct ktask *t, uint64_t time)
{
	struct unwind_kmodel_event *ev = &km->events[km->nr_events];

	memset(ev, 0, sizeof(*ev));
	ev->type = type;
	ev->seq = km->nr_events;
	ev->pid = t->pid;
	ev->tid = t->tid;
	ev->cpu = t->cpu;
	ev->time = time;
	km->nr_events++;
	return ev;
}

static int set_truth(struct unwind_kmodel_event *ev, const uint64_t *ips, size_t nr)
{
	int err;

	ev->truth = dup_ips(ips, nr, &err);
	if (err)
		return err;
	ev->nr_truth = nr;
	ev->truth_known = true;
	return 0;
}

/* ---- cookies ---- */

static int assign_cookie(struct unwind_kmodel *km, struct ktask *t)
{
	uint64_t *cnt = &km->counters[t->cpu];
	uint64_t cookie;
	int err;

	if (!layout_merged(km->layout) && t->cpu == 0 && *cnt == 0)
		*cnt = 1;	/* CPU 0, counter 0 would be cookie 0 */
	err = unwind_cookie__encode(km->layout, t->cpu, *cnt, &cookie);
	if (err)
		return err;
	if (!cookie)
		return -EINVAL;
	if (layout_merged(km->layout))
		*cnt = (*cnt + 2) & UINT32_MAX;		/* stays odd */
	else
		*cnt = (*cnt + 1) & SEED_COUNTER_MASK;
	t->cookie = cookie;
	return 0;
}

/* ---- users and the task_work ---- */

static bool user_valid(const struct unwind_kmodel *km, int user)
{
	return user >= 0 && user < UNWIND_KMODEL_MAX_USERS && (km->users_mask & (1ULL << user));
}

/* The perf user's callback: the records, then the truth of the waiting samples. */
static void perf_user_callback(void *ctx, uint32_t tid, const struct unwind_kmodel_trace *trace,
			       uint64_t cookie)
{
	struct unwind_kmodel *km = ctx;
	struct ktask *t = km->cb_task;
	bool written = false;
	size_t i;
	int err;

	if (!t || t->tid != tid)
		return;

	if (km->cb_records) {
		for (i = 0; i < km->nr_listeners; i++) {
			struct unwind_kmodel_event *ev;
			uint64_t *ips;

			ips = dup_ips(trace->ips, trace->nr, &err);
			if (!err)
				err = log_reserve(km, 1);
			if (err) {
				free(ips);
				km->cb_err = err;
				continue;
			}
			ev = log_append(km, UNWIND_KMODEL_RECORD, t, km->cb_time);
			ev->id = km->first_listener_id + i;
			ev->cookie = cookie;
			ev->ips = ips;
			ev->nr = trace->nr;
			written = true;
		}
	}

	for (i = 0; i < t->nr_waits; i++) {
		const struct truth_wait *w = &t->waits[i];

		if (!written || w->exec_gen != t->cache_gen)
			continue;
		err = set_truth(&km->events[w->idx], trace->ips, trace->nr);
		if (err)
			km->cb_err = err;
	}
	t->nr_waits = 0;
}

/*
 * unwind_deferred_task_work() / unwind_deferred_task_exit(): one unwind,
 * then every queued callback in bit order.
 */
static int run_task_work(struct unwind_kmodel *km, struct ktask *t, uint64_t time, bool records)
{
	struct unwind_kmodel_trace trace;
	uint64_t bits;
	int bit, err = 0;

	if (!t->work_queued)
		return 0;
	t->work_queued = false;
	bits = t->pending & ~t->called;
	t->pending = 0;
	t->called |= bits;

	if (!t->cache_valid) {
		size_t nr = t->nr_stack;
		int e;

		if (nr > UNWIND_COOKIE_MAX_DEFERRED_DEPTH)
			nr = UNWIND_COOKIE_MAX_DEFERRED_DEPTH;
		t->cache = dup_ips(t->stack, nr, &e);
		/* As in the kernel: no cache means an empty trace, callbacks still run. */
		t->nr_cache = e ? 0 : nr;
		if (e)
			err = e;
		t->cache_gen = t->exec_gen;
		t->cache_valid = true;
		km->nr_unwinds++;
	}
	trace.ips = t->cache;
	trace.nr = t->nr_cache;

	km->in_callback = true;
	km->cb_task = t;
	km->cb_time = time;
	km->cb_records = records;
	km->cb_err = 0;
	for (bit = 0; bit < UNWIND_KMODEL_MAX_USERS; bit++) {
		if (!(bits & (1ULL << bit)) || !user_valid(km, bit))
			continue;
		km->users[bit].fn(km->users[bit].ctx, t->tid, &trace, t->cookie);
	}
	km->in_callback = false;
	km->cb_task = NULL;
	if (km->cb_err)
		err = km->cb_err;
	return err;
}

static int do_request(struct unwind_kmodel *km, struct ktask *t, int user, uint64_t *cookie)
{
	uint64_t bit;
	int err;

	*cookie = 0;
	if ((t->flags & UNWIND_KMODEL_KTHREAD) || t->exiting || !t->in_kernel)
		return -EINVAL;
	if (!user_valid(km, user))
		return -EINVAL;
	bit = 1ULL << user;
	if (!t->cookie) {
		err = assign_cookie(km, t);
		if (err)
			return err;
	}
	*cookie = t->cookie;
	if ((t->pending | t->called) & bit)
		return 1;
	t->pending |= bit;
	t->work_queued = true;
	return 0;
}

/* exit_to_user_mode(): task_work if still queued, then the cookie is gone. */
static int do_return(struct unwind_kmodel *km, struct ktask *t, uint64_t time)
{
	int err = run_task_work(km, t, time, true);

	task_reset_entry(t);
	t->in_kernel = false;
	return err;
}

/* ---- public API ---- */

struct unwind_kmodel *unwind_kmodel__new(const struct unwind_kmodel_opts *uopts)
{
	struct unwind_kmodel_opts opts;
	struct unwind_kmodel *km;
	uint64_t start;
	uint32_t i;

	if (!uopts || uopts->sz < KMODEL_OPTS_MIN_SZ ||
	    !uc_opts_tail_zero(uopts, uopts->sz, sizeof(opts)))
		goto einval;
	memset(&opts, 0, sizeof(opts));
	memcpy(&opts, uopts, uopts->sz < sizeof(opts) ? uopts->sz : sizeof(opts));

	if (!opts.nr_cpus || (unsigned int)opts.layout >= UNWIND_COOKIE_LAYOUT__MAX)
		goto einval;
	if (layout_merged(opts.layout)) {
		if (opts.counter_start > UINT32_MAX)
			goto einval;
		start = opts.counter_start | 1;
	} else {
		if (opts.nr_cpus > SEED_MAX_CPUS || opts.counter_start > SEED_COUNTER_MASK)
			goto einval;
		start = opts.counter_start;
	}

	km = calloc(1, sizeof(*km));
	if (!km)
		goto enomem;
	km->nr_cpus = opts.nr_cpus;
	km->layout = opts.layout;
	km->nr_listeners = opts.nr_listeners ? opts.nr_listeners : 1;
	km->first_listener_id = opts.first_listener_id ? opts.first_listener_id : 1;
	km->counters = calloc(opts.nr_cpus, sizeof(*km->counters));
	km->nr_buckets = 64;
	km->buckets = calloc(km->nr_buckets, sizeof(*km->buckets));
	if (!km->counters || !km->buckets) {
		unwind_kmodel__delete(km);
		goto enomem;
	}
	for (i = 0; i < opts.nr_cpus; i++)
		km->counters[i] = start;

	km->perf_user = unwind_kmodel__user_register(km, perf_user_callback, km);
	if (km->perf_user < 0) {
		unwind_kmodel__delete(km);
		goto einval;
	}
	return km;

einval:
	errno = EINVAL;
	return NULL;
enomem:
	errno = ENOMEM;
	return NULL;
}

void unwind_kmodel__delete(struct unwind_kmodel *km)
{
	size_t i;

	if (!km)
		return;
	for (i = 0; i < km->nr_events; i++) {
		free(km->events[i].ips);
		free(km->events[i].truth);
	}
	free(km->events);
	for (i = 0; km->buckets && i < km->nr_buckets; i++) {
		struct ktask *t = km->buckets[i], *next;

		for (; t; t = next) {
			next = t->next;
			task_free(t);
		}
	}
	free(km->buckets);
	free(km->counters);
	free(km);
}

int unwind_kmodel__user_register(struct unwind_kmodel *km, unwind_kmodel_callback_fn fn, void *ctx)
{
	int bit;

	if (!km || !fn || km->in_callback)
		return -EINVAL;
	for (bit = 0; bit < UNWIND_KMODEL_MAX_USERS; bit++) {
		if (km->users_mask & (1ULL << bit))
			continue;
		km->users[bit].fn = fn;
		km->users[bit].ctx = ctx;
		km->users_mask |= 1ULL << bit;
		return bit;
	}
	return -EBUSY;
}

int unwind_kmodel__user_unregister(struct unwind_kmodel *km, int user)
{
	uint64_t bit;
	size_t i;

	if (!km || km->in_callback || !user_valid(km, user) || user == km->perf_user)
		return -EINVAL;
	bit = 1ULL << user;
	km->users_mask &= ~bit;
	km->users[user].fn = NULL;
	km->users[user].ctx = NULL;
	/* unwind_deferred_cancel(): clear the bit from every task. */
	for (i = 0; i < km->nr_buckets; i++) {
		struct ktask *t;

		for (t = km->buckets[i]; t; t = t->next) {
			t->pending &= ~bit;
			t->called &= ~bit;
		}
	}
	return 0;
}

int unwind_kmodel__request(struct unwind_kmodel *km, uint32_t tid, int user, uint64_t *cookie)
{
	struct ktask *t;

	if (cookie)
		*cookie = 0;
	if (!km || !cookie || km->in_callback)
		return -EINVAL;
	t = task_find(km, tid);
	if (!t)
		return -ESRCH;
	return do_request(km, t, user, cookie);
}

int unwind_kmodel__task_new(struct unwind_kmodel *km, uint32_t pid, uint32_t tid, uint32_t cpu,
			    unsigned int flags)
{
	struct ktask *t, *old;

	if (!km || km->in_callback || cpu >= km->nr_cpus || (flags & ~UNWIND_KMODEL_KTHREAD))
		return -EINVAL;
	old = task_find(km, tid);
	if (old && !old->exiting)
		return -EEXIST;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	if (old) {
		/* A new incarnation of a dead tid. */
		task_unlink(km, old);
		task_free(old);
	}
	t->pid = pid;
	t->tid = tid;
	t->cpu = cpu;
	t->flags = flags;
	/* Kernel threads live in the kernel; user tasks appear in user mode. */
	t->in_kernel = flags & UNWIND_KMODEL_KTHREAD;
	task_insert(km, t);
	return 0;
}

int unwind_kmodel__task_set_user_stack(struct unwind_kmodel *km, uint32_t tid, const uint64_t *ips,
				       size_t nr)
{
	struct ktask *t;
	uint64_t *copy;
	int err;

	if (!km || km->in_callback || (nr && !ips))
		return -EINVAL;
	t = task_find(km, tid);
	if (!t)
		return -ESRCH;
	if ((t->flags & UNWIND_KMODEL_KTHREAD) || t->exiting)
		return -EINVAL;
	copy = dup_ips(ips, nr, &err);
	if (err)
		return err;
	free(t->stack);
	t->stack = copy;
	t->nr_stack = nr;
	return 0;
}

/* A task that can enter and leave the kernel, or NULL with *err set. */
static struct ktask *user_task(struct unwind_kmodel *km, uint32_t tid, int *err)
{
	struct ktask *t;

	*err = -EINVAL;
	if (!km || km->in_callback)
		return NULL;
	t = task_find(km, tid);
	if (!t) {
		*err = -ESRCH;
		return NULL;
	}
	if ((t->flags & UNWIND_KMODEL_KTHREAD) || t->exiting)
		return NULL;
	*err = 0;
	return t;
}

int unwind_kmodel__task_enter(struct unwind_kmodel *km, uint32_t tid, uint64_t time)
{
	struct ktask *t;
	int err;

	(void)time;
	t = user_task(km, tid, &err);
	if (!t)
		return err;
	if (t->in_kernel)
		return -EINVAL;
	task_reset_entry(t);
	t->in_kernel = true;
	return 0;
}

int unwind_kmodel__task_migrate(struct unwind_kmodel *km, uint32_t tid, uint32_t cpu)
{
	struct ktask *t;

	if (!km || km->in_callback || cpu >= km->nr_cpus)
		return -EINVAL;
	t = task_find(km, tid);
	if (!t)
		return -ESRCH;
	if (t->exiting || !t->in_kernel)
		return -EINVAL;
	t->cpu = cpu;
	return 0;
}

int unwind_kmodel__task_work(struct unwind_kmodel *km, uint32_t tid, uint64_t time)
{
	struct ktask *t;
	int err;

	t = user_task(km, tid, &err);
	if (!t)
		return err;
	if (!t->in_kernel)
		return -EINVAL;
	return run_task_work(km, t, time, true);
}

int unwind_kmodel__task_return(struct unwind_kmodel *km, uint32_t tid, uint64_t time)
{
	struct ktask *t;
	int err;

	t = user_task(km, tid, &err);
	if (!t)
		return err;
	if (!t->in_kernel)
		return -EINVAL;
	return do_return(km, t, time);
}

int unwind_kmodel__task_exec(struct unwind_kmodel *km, uint32_t tid, uint64_t time,
			     const uint64_t *ips, size_t nr)
{
	struct ktask *t;
	uint64_t *copy;
	int err;

	if (nr && !ips)
		return -EINVAL;
	t = user_task(km, tid, &err);
	if (!t)
		return err;
	if (!t->in_kernel)
		return -EINVAL;
	copy = dup_ips(ips, nr, &err);
	if (err)
		return err;
	err = log_reserve(km, 1);
	if (err) {
		free(copy);
		return err;
	}
	free(t->stack);
	t->stack = copy;
	t->nr_stack = nr;
	t->exec_gen++;
	log_append(km, UNWIND_KMODEL_EXEC, t, time);
	return 0;
}

int unwind_kmodel__task_exit(struct unwind_kmodel *km, uint32_t tid, uint64_t time,
			     bool records_reach_listener)
{
	struct ktask *t;
	int err, err2;

	if (!km || km->in_callback)
		return -EINVAL;
	t = task_find(km, tid);
	if (!t)
		return -ESRCH;
	if (t->exiting)
		return -EINVAL;
	t->exiting = true;	/* PF_EXITING: no more requests */
	t->in_kernel = true;	/* do_exit() runs in the kernel */

	err2 = log_reserve(km, 1);
	if (err2)
		return err2;
	log_append(km, UNWIND_KMODEL_EXIT, t, time);
	/*
	 * unwind_deferred_task_exit(): the callbacks run while the mm is
	 * there, but what they write reaches a CPU-wide event after the
	 * task's PERF_RECORD_EXIT (seen on 7.2: 12us after).
	 */
	err = run_task_work(km, t, time + 1, records_reach_listener);
	/* Without a record, the waiting samples' truth stays unknown. */
	task_reset_entry(t);
	free(t->stack);
	t->stack = NULL;
	t->nr_stack = 0;
	return err;
}

/* The sample of a task in the kernel (or refused): see unwind_kmodel__sample(). */
static long sample_kernel(struct unwind_kmodel *km, struct ktask *t, uint64_t time, uint64_t id,
			  const uint64_t *kernel, size_t nr_kernel)
{
	struct unwind_kmodel_event *ev;
	uint64_t cookie = 0, pbit = 1ULL << km->perf_user;
	size_t nr, n = 0, idx;
	uint64_t *chain = NULL;
	bool defer;
	int ret, err;

	defer = !(t->flags & UNWIND_KMODEL_KTHREAD) && !t->exiting && t->in_kernel;
	if (nr_kernel > SIZE_MAX / sizeof(*chain) - 3)
		return -EINVAL;
	nr = (nr_kernel ? nr_kernel + 1 : 0) + (defer ? 2 : 0);
	if (nr) {
		chain = malloc(nr * sizeof(*chain));
		if (!chain)
			return -ENOMEM;
	}
	err = log_reserve(km, 1);
	if (!err && defer)
		err = waits_reserve(t);
	if (err) {
		free(chain);
		return err;
	}

	ret = defer ? do_request(km, t, km->perf_user, &cookie) : -EINVAL;

	if (nr_kernel) {
		chain[n++] = UNWIND_COOKIE_CONTEXT_KERNEL;
		memcpy(&chain[n], kernel, nr_kernel * sizeof(*chain));
		n += nr_kernel;
	}
	if (ret >= 0) {
		chain[n++] = UNWIND_COOKIE_CONTEXT_USER_DEFERRED;
		chain[n++] = cookie;
	}
	if (!n) {
		free(chain);
		chain = NULL;
	}

	idx = km->nr_events;
	ev = log_append(km, UNWIND_KMODEL_SAMPLE, t, time);
	ev->id = id;
	ev->cookie = ret >= 0 ? cookie : 0;
	ev->ips = chain;
	ev->nr = n;
	if (ret < 0)
		return (long)idx;

	if (t->pending & pbit) {
		t->waits[t->nr_waits].idx = idx;
		t->waits[t->nr_waits].exec_gen = t->exec_gen;
		t->nr_waits++;
	} else if (t->called & pbit) {
		/* Its record is already written: a late sample. */
		ev->late = true;
		if (t->cache_valid && t->cache_gen == t->exec_gen) {
			err = set_truth(ev, t->cache, t->nr_cache);
			if (err)
				return err;
		}
	}
	return (long)idx;
}

long unwind_kmodel__sample(struct unwind_kmodel *km, uint32_t tid, uint64_t time, uint64_t id,
			   const uint64_t *kernel, size_t nr_kernel, bool user_mode)
{
	struct ktask *t;
	long idx;
	int err;

	if (!km || km->in_callback || (nr_kernel && !kernel))
		return -EINVAL;
	t = task_find(km, tid);
	if (!t)
		return -ESRCH;
	if (!user_mode)
		return sample_kernel(km, t, time, id, kernel, nr_kernel);

	/* In user space: the interrupt is a kernel entry of its own. */
	if ((t->flags & UNWIND_KMODEL_KTHREAD) || t->exiting || t->in_kernel)
		return -EINVAL;
	task_reset_entry(t);
	t->in_kernel = true;
	idx = sample_kernel(km, t, time, id, NULL, 0);
	err = do_return(km, t, time + 1);
	if (idx < 0)
		return idx;
	return err ? err : idx;
}

const struct unwind_kmodel_event *unwind_kmodel__events(const struct unwind_kmodel *km, size_t *nr)
{
	if (!km) {
		if (nr)
			*nr = 0;
		return NULL;
	}
	if (nr)
		*nr = km->nr_events;
	return km->events;
}

struct order_key {
	uint64_t	round;
	uint32_t	cpu;
	size_t		idx;
};

static int order_key_cmp(const void *a, const void *b)
{
	const struct order_key *x = a, *y = b;

	if (x->round != y->round)
		return x->round < y->round ? -1 : 1;
	if (x->cpu != y->cpu)
		return x->cpu < y->cpu ? -1 : 1;
	if (x->idx != y->idx)
		return x->idx < y->idx ? -1 : 1;
	return 0;
}

int unwind_kmodel__file_order(const struct unwind_kmodel *km, uint64_t round, size_t *order,
			      size_t nr)
{
	struct order_key *keys;
	size_t i;

	if (!km || !round || nr != km->nr_events || (nr && !order))
		return -EINVAL;
	if (!nr)
		return 0;
	keys = calloc(nr, sizeof(*keys));
	if (!keys)
		return -ENOMEM;
	for (i = 0; i < nr; i++) {
		keys[i].round = km->events[i].time / round;
		keys[i].cpu = km->events[i].cpu;
		keys[i].idx = i;
	}
	qsort(keys, nr, sizeof(*keys), order_key_cmp);
	for (i = 0; i < nr; i++)
		order[i] = keys[i].idx;
	free(keys);
	return 0;
}

uint64_t unwind_kmodel__nr_unwinds(const struct unwind_kmodel *km)
{
	return km ? km->nr_unwinds : 0;
}
