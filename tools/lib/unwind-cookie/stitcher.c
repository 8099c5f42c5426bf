// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The streaming stitch engine: joins samples carrying a deferred-unwind
 * cookie to the PERF_RECORD_CALLCHAIN_DEFERRED record holding their user
 * callchain. Documentation/stitching.md describes the algorithm; in short:
 *
 * - A "slot" gathers what is known of one kernel entry of one task: the
 *   (tid, cookie) key, the samples waiting for the entry's record, and the
 *   record once seen. Slots live in a hash keyed by (tid, cookie), so every
 *   input costs expected O(1): no input ever walks the pending samples of
 *   other entries.
 * - Time only moves through the horizon: the time before which every
 *   input has arrived. In time order it is the largest time fed so far
 *   (the watermark); otherwise the input may be out of order by up to
 *   opts.window, and by no more than the caller's rounds say
 *   (unwind_stitcher__horizon()). Every decision that depends on
 *   something not arriving waits until the horizon has passed the
 *   evidence. Such checks sit in one deadline queue. Deadlines are the
 *   watermark when set (plus the window in time order), which never
 *   decreases, so the queue is a FIFO and needs no heap.
 * - A task keeps the exec and exit boundaries seen for its tid, so that a
 *   reused tid or a repeated cookie never joins two incarnations.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unwind-cookie/stitcher.h>
#include <unwind-cookie/callchain.h>
#include <internal/lib.h>
#include <internal/list.h>
#include <internal/pool.h>

/* Deeper records are refused: no producer writes them, and they cost memory. */
#define MAX_RECORD_NR		(1U << 16)
#define MAX_KERNEL_NR		(1U << 16)

/*
 * Larger windows are clamped so that "time + window" cannot overflow; 2^62
 * ns is 146 years.
 */
#define MAX_WINDOW		(1ULL << 62)

#define LAT_SUB_BITS		4
#define LAT_SUB			(1U << LAT_SUB_BITS)
#define LAT_BUCKETS		(64U * LAT_SUB)

struct hnode {
	struct hnode	*next;
	uint64_t	hash;
};

/*
 * A user stack, shared by every record with the same entries (one thread
 * in one loop writes the same stack over and over) and by the samples
 * stitched to it until they are delivered.
 */
struct stack {
	struct hnode	hnode;		/* in unwind_stitcher::stacks */
	unsigned int	refcnt;
	size_t		nr;
	uint64_t	ips[];
};

/*
 * A record seen, owned by its slot; or, read ahead by the caller
 * (unwind_stitcher__add_sample_ahead()), one still to come in its place.
 */
struct record {
	uint32_t	pid;
	uint32_t	cpu;
	uint64_t	time;
	bool		claimed;
	bool		ahead;
	struct stack	*stack;
};

/*
 * What the output queue holds (ORDER_INPUT): a passthrough item is this
 * alone, a sample starts with it.
 */
struct queued {
	struct uc_list	out_node;	/* in the output queue (ORDER_INPUT) */
	void		*payload;
	uint64_t	time;
	size_t		bytes;		/* what it counts in pending_bytes */
	bool		resolved;
	bool		passthrough;	/* not a sample: not in pending_samples */
};

struct sample {
	struct queued	q;
	struct uc_list	slot_node;	/* in its slot, while waiting for a record */
	enum unwind_stitch_status status;
	enum unwind_orphan_reason reason;
	uint32_t	pid;
	uint32_t	tid;
	uint32_t	cpu;
	/* the record it was stitched to: its user stack, CPU and time */
	uint32_t	record_cpu;
	uint64_t	record_time;
	struct stack	*user;
	uint64_t	cookie;
	bool		late;
	size_t		nr_kernel;
	uint64_t	kernel[];
};

struct htable {
	struct hnode	**buckets;
	size_t		mask;
	size_t		count;
};

enum deadline_kind {
	DEADLINE_SLOT,
	DEADLINE_TASK,
};

struct deadline {
	struct uc_list	node;
	uint64_t	when;
	enum deadline_kind kind;
};

struct boundary {
	uint64_t	time;
	bool		exit;	/* else exec */
};

struct task {
	struct hnode	hnode;
	uint32_t	tid;
	struct uc_list	slots;
	/* slots waiting for evidence, off the deadline queue (slot_check()) */
	struct uc_list	idle;
	size_t		nr_slots;
	struct deadline	gc;
	bool		has_record_time;
	uint64_t	max_record_time;
	struct boundary	*bounds;
	size_t		nr_bounds;
	size_t		bounds_cap;
};

/* One kernel entry of one task incarnation. */
struct slot {
	struct hnode	hnode;
	struct uc_list	task_node;
	struct uc_list	idle_node;	/* in task->idle */
	struct uc_list	age_node;
	struct deadline	check;
	struct task	*task;
	uint64_t	cookie;
	uint32_t	pid;
	uint64_t	first_time;
	/* smallest and largest sample time (the record's time until a sample) */
	uint64_t	min_time;
	uint64_t	max_time;
	struct uc_list	samples;
	size_t		nr_samples;
	struct record	*record;
	/* Deadlines passed since the record came: it is kept for two. */
	unsigned int	record_checks;
	/* Why its record should have come by now, found by a first check. */
	bool		has_evidence;
	enum unwind_orphan_reason evidence_reason;
	uint64_t	evidence_time;
};

struct unwind_stitcher {
	struct unwind_stitcher_opts opts;
	struct htable	slots;
	struct htable	tasks;
	struct htable	stacks;
	struct uc_list	deadlines;
	struct uc_list	ages;
	struct uc_list	output;
	uint64_t	watermark;
	/* From unwind_stitcher__horizon(): nothing older is still to come. */
	uint64_t	round_horizon;
	bool		has_round_horizon;
	/* Times of lost notices, sorted: rare, so kept whole. */
	uint64_t	*lost_times;
	size_t		nr_lost;
	size_t		lost_cap;
	bool		cap_warned;
	struct unwind_stitcher_stats stats;
	struct uc_pool	pool;		/* samples, slots, records, stacks, tasks */
	uint64_t	lat_pos[LAT_BUCKETS];
	uint64_t	lat_neg[LAT_BUCKETS];
};

static const char * const reason_names[UNWIND_ORPHAN__MAX] = {
	[UNWIND_ORPHAN_NONE]		= "none",
	[UNWIND_ORPHAN_RECORD_LOST]	= "record lost",
	[UNWIND_ORPHAN_TASK_EXITED]	= "task exited",
	[UNWIND_ORPHAN_STREAM_ENDED]	= "stream ended",
	[UNWIND_ORPHAN_MEMORY_CAP]	= "memory cap",
	[UNWIND_ORPHAN_EXEC]		= "exec",
	[UNWIND_ORPHAN_UNWIND_FAILED]	= "unwind failed",
};

static const char * const reason_keys[UNWIND_ORPHAN__MAX] = {
	[UNWIND_ORPHAN_NONE]		= "none",
	[UNWIND_ORPHAN_RECORD_LOST]	= "record_lost",
	[UNWIND_ORPHAN_TASK_EXITED]	= "task_exited",
	[UNWIND_ORPHAN_STREAM_ENDED]	= "stream_ended",
	[UNWIND_ORPHAN_MEMORY_CAP]	= "memory_cap",
	[UNWIND_ORPHAN_EXEC]		= "exec",
	[UNWIND_ORPHAN_UNWIND_FAILED]	= "unwind_failed",
};

const char *unwind_orphan_reason__name(enum unwind_orphan_reason reason)
{
	return (unsigned int)reason < UNWIND_ORPHAN__MAX ? reason_names[reason] : NULL;
}

const char *unwind_orphan_reason__key(enum unwind_orphan_reason reason)
{
	return (unsigned int)reason < UNWIND_ORPHAN__MAX ? reason_keys[reason] : NULL;
}

/* ---- hash tables ---- */

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

static uint64_t slot_hash(uint32_t tid, uint64_t cookie)
{
	return mix64(cookie ^ ((uint64_t)tid * 0x9e3779b97f4a7c15ULL));
}

static uint64_t task_hash(uint32_t tid)
{
	return mix64(tid);
}

static int htable_init(struct htable *t)
{
	t->buckets = calloc(64, sizeof(*t->buckets));
	if (!t->buckets)
		return -ENOMEM;
	t->mask = 63;
	t->count = 0;
	return 0;
}

/* Doubling keeps chains short; a failed grow only costs speed. */
static void htable_grow(struct htable *t)
{
	size_t size = (t->mask + 1) * 2, i;
	struct hnode **buckets = calloc(size, sizeof(*buckets));

	if (!buckets)
		return;
	for (i = 0; i <= t->mask; i++) {
		struct hnode *n = t->buckets[i], *next;

		for (; n; n = next) {
			next = n->next;
			n->next = buckets[n->hash & (size - 1)];
			buckets[n->hash & (size - 1)] = n;
		}
	}
	free(t->buckets);
	t->buckets = buckets;
	t->mask = size - 1;
}

static void htable_add(struct htable *t, struct hnode *n, uint64_t hash)
{
	if (t->count >= t->mask + 1)
		htable_grow(t);
	n->hash = hash;
	n->next = t->buckets[hash & t->mask];
	t->buckets[hash & t->mask] = n;
	t->count++;
}

static void htable_del(struct htable *t, struct hnode *n)
{
	struct hnode **pp = &t->buckets[n->hash & t->mask];

	for (; *pp; pp = &(*pp)->next) {
		if (*pp == n) {
			*pp = n->next;
			t->count--;
			return;
		}
	}
}

static struct hnode *htable_first(const struct htable *t, uint64_t hash)
{
	struct hnode *n = t->buckets[hash & t->mask];

	while (n && n->hash != hash)
		n = n->next;
	return n;
}

static struct hnode *htable_next(const struct hnode *n, uint64_t hash)
{
	for (n = n->next; n && n->hash != hash; n = n->next)
		;
	return (struct hnode *)n;
}

/* ---- accounting ---- */

static void account(struct unwind_stitcher *st, long samples, long long bytes)
{
	st->stats.pending_samples += samples;
	st->stats.pending_bytes += bytes;
	if (st->stats.pending_samples > st->stats.peak_pending_samples)
		st->stats.peak_pending_samples = st->stats.pending_samples;
	if (st->stats.pending_bytes > st->stats.peak_pending_bytes)
		st->stats.peak_pending_bytes = st->stats.pending_bytes;
}

static unsigned int lat_bucket(uint64_t v)
{
	unsigned int msb;

	if (v < 2 * LAT_SUB)
		return v;
	msb = 63 - __builtin_clzll(v);
	return (msb - LAT_SUB_BITS + 1) * LAT_SUB + ((v >> (msb - LAT_SUB_BITS)) & (LAT_SUB - 1));
}

static uint64_t lat_bucket_floor(unsigned int b)
{
	unsigned int msb;

	if (b < 2 * LAT_SUB)
		return b;
	msb = b / LAT_SUB + LAT_SUB_BITS - 1;
	return (uint64_t)(LAT_SUB + b % LAT_SUB) << (msb - LAT_SUB_BITS);
}

static void latency_add(struct unwind_stitcher *st, int64_t lat)
{
	struct unwind_stitcher_latency *l = &st->stats.latency;

	if (!l->count || lat < l->min)
		l->min = lat;
	if (!l->count || lat > l->max)
		l->max = lat;
	l->count++;
	if (lat < 0)
		st->lat_neg[lat_bucket(-(uint64_t)lat)]++;
	else
		st->lat_pos[lat_bucket(lat)]++;
}

/* The value at @rank (1-based), to within the bucket width (1/16). */
static int64_t latency_rank(const struct unwind_stitcher *st, uint64_t rank)
{
	const struct unwind_stitcher_latency *l = &st->stats.latency;
	uint64_t seen = 0;
	int64_t v = l->max;
	unsigned int b;

	for (b = LAT_BUCKETS; b-- > 0;) {
		seen += st->lat_neg[b];
		if (seen >= rank) {
			v = -(int64_t)lat_bucket_floor(b);
			goto out;
		}
	}
	for (b = 0; b < LAT_BUCKETS; b++) {
		seen += st->lat_pos[b];
		if (seen >= rank) {
			v = lat_bucket_floor(b);
			break;
		}
	}
out:
	if (v < l->min)
		v = l->min;
	if (v > l->max)
		v = l->max;
	return v;
}

/* ---- records ---- */

static uint64_t stack_hash(const uint64_t *ips, size_t nr)
{
	uint64_t h = nr;
	size_t i;

	for (i = 0; i < nr; i++)
		h = mix64(h ^ ips[i]);
	return h;
}

static size_t stack_size(size_t nr)
{
	return sizeof(struct stack) + nr * sizeof(uint64_t);
}

/* The shared stack of @nr entries @ips, one more reference to it. */
static struct stack *stack_get(struct unwind_stitcher *st, const uint64_t *ips, size_t nr)
{
	uint64_t h = stack_hash(ips, nr);
	struct stack *sk;
	struct hnode *n;

	for (n = htable_first(&st->stacks, h); n; n = htable_next(n, h)) {
		sk = uc_container_of(n, struct stack, hnode);
		if (sk->nr == nr && (!nr || !memcmp(sk->ips, ips, nr * sizeof(*ips)))) {
			sk->refcnt++;
			return sk;
		}
	}
	sk = uc_pool__alloc(&st->pool, stack_size(nr));
	if (!sk)
		return NULL;
	sk->refcnt = 1;
	sk->nr = nr;
	if (nr)
		memcpy(sk->ips, ips, nr * sizeof(*ips));
	htable_add(&st->stacks, &sk->hnode, h);
	account(st, 0, stack_size(nr));
	return sk;
}

static void stack_put(struct unwind_stitcher *st, struct stack *sk)
{
	if (!sk || --sk->refcnt)
		return;
	htable_del(&st->stacks, &sk->hnode);
	account(st, 0, -(long long)stack_size(sk->nr));
	uc_pool__free(&st->pool, sk, stack_size(sk->nr));
}

static void record_free(struct unwind_stitcher *st, struct record *rec)
{
	stack_put(st, rec->stack);
	account(st, 0, -(long long)sizeof(*rec));
	uc_pool__free(&st->pool, rec, sizeof(*rec));
}

/* ---- delivery ---- */

static void queued_free(struct unwind_stitcher *st, struct queued *q)
{
	struct sample *s = uc_container_of(q, struct sample, q);

	account(st, q->passthrough ? 0 : -1, -(long long)q->bytes);
	if (q->passthrough) {
		uc_pool__free(&st->pool, q, sizeof(*q));
		return;
	}
	stack_put(st, s->user);
	uc_pool__free(&st->pool, s, sizeof(*s) + s->nr_kernel * sizeof(s->kernel[0]));
}

static void sample_free(struct unwind_stitcher *st, struct sample *s)
{
	queued_free(st, &s->q);
}

static void deliver(struct unwind_stitcher *st, struct queued *q)
{
	struct sample *s = uc_container_of(q, struct sample, q);
	struct unwind_stitched_sample out = {
		.status		= UNWIND_STITCH_PASSTHROUGH,
		.time		= q->time,
		.payload	= q->payload,
	};

	if (!q->passthrough) {
		out.status = s->status;
		out.reason = s->reason;
		out.pid = s->pid;
		out.tid = s->tid;
		out.cpu = s->cpu;
		out.cookie = s->cookie;
		out.kernel = s->kernel;
		out.nr_kernel = s->nr_kernel;
		out.late = s->late;
		if (s->user && s->status == UNWIND_STITCH_STITCHED) {
			out.user = s->user->ips;
			out.nr_user = s->user->nr;
			out.record_cpu = s->record_cpu;
			out.record_time = s->record_time;
		}
	}
	if (st->opts.deliver)
		st->opts.deliver(st->opts.ctx, &out);
}

/* ORDER_INPUT: hand back the resolved head of the queue. */
static void drain(struct unwind_stitcher *st)
{
	while (!uc_list_empty(&st->output)) {
		struct queued *q = uc_container_of(st->output.next, struct queued, out_node);

		if (!q->resolved)
			break;
		uc_list_del(&q->out_node);
		deliver(st, q);
		queued_free(st, q);
	}
}

static void resolve(struct unwind_stitcher *st, struct sample *s, enum unwind_stitch_status status,
		    enum unwind_orphan_reason reason, struct record *rec)
{
	s->status = status;
	s->reason = reason;
	s->q.resolved = true;
	if (uc_list_linked(&s->slot_node))
		uc_list_del(&s->slot_node);

	if (status == UNWIND_STITCH_STITCHED) {
		st->stats.stitched++;
		s->late = s->q.time > rec->time;
		if (s->late)
			st->stats.late_samples++;
		latency_add(st, (int64_t)(rec->time - s->q.time));
		rec->stack->refcnt++;
		rec->claimed = true;
		s->user = rec->stack;
		s->record_cpu = rec->cpu;
		s->record_time = rec->time;
	} else if (status == UNWIND_STITCH_ORPHAN) {
		st->stats.orphans[reason]++;
		st->stats.orphans_total++;
	}

	if (st->opts.order == UNWIND_STITCHER_ORDER_RESOLVED) {
		deliver(st, &s->q);
		sample_free(st, s);
	}
}

/* ---- tasks ---- */

static struct task *task_find(struct unwind_stitcher *st, uint32_t tid)
{
	uint64_t h = task_hash(tid);
	struct hnode *n;

	for (n = htable_first(&st->tasks, h); n; n = htable_next(n, h)) {
		struct task *t = uc_container_of(n, struct task, hnode);

		if (t->tid == tid)
			return t;
	}
	return NULL;
}

static struct task *task_get(struct unwind_stitcher *st, uint32_t tid)
{
	struct task *t = task_find(st, tid);

	if (t)
		return t;
	t = uc_pool__alloc(&st->pool, sizeof(*t));
	if (!t)
		return NULL;
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	uc_list_init(&t->slots);
	uc_list_init(&t->idle);
	uc_list_init(&t->gc.node);
	t->gc.kind = DEADLINE_TASK;
	htable_add(&st->tasks, &t->hnode, task_hash(tid));
	account(st, 0, sizeof(*t));
	return t;
}

static void task_free(struct unwind_stitcher *st, struct task *t)
{
	htable_del(&st->tasks, &t->hnode);
	uc_list_del(&t->gc.node);
	account(st, 0, -(long long)(sizeof(*t) + t->bounds_cap * sizeof(*t->bounds)));
	free(t->bounds);
	uc_pool__free(&st->pool, t, sizeof(*t));
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

/*
 * The time before which every input has arrived: the watermark in time
 * order; else a window before it, and no later than the caller's rounds
 * allow.
 */
static uint64_t horizon(const struct unwind_stitcher *st)
{
	uint64_t h;

	if (st->opts.sorted)
		return st->watermark;
	h = st->watermark > st->opts.window ? st->watermark - st->opts.window : 0;
	if (st->has_round_horizon && st->round_horizon < h)
		h = st->round_horizon;
	return h;
}

/*
 * A check once everything fed so far is settled, and in time order a
 * window more, for late samples and copies (unsorted input gets that from
 * its second check).
 */
static void schedule(struct unwind_stitcher *st, struct deadline *d)
{
	if (uc_list_linked(&d->node))
		uc_list_del(&d->node);
	d->when = st->opts.sorted ? sat_add(st->watermark, st->opts.window) : st->watermark;
	uc_list_add_tail(&d->node, &st->deadlines);
}

/*
 * A task without slots is kept one more window: its boundaries and last
 * record time still matter to inputs that arrive out of order.
 */
static void task_release(struct unwind_stitcher *st, struct task *t)
{
	if (!t->nr_slots)
		schedule(st, &t->gc);
}

static int task_add_boundary(struct unwind_stitcher *st, struct task *t, uint64_t time, bool exit)
{
	if (t->nr_bounds == t->bounds_cap) {
		size_t cap = t->bounds_cap ? t->bounds_cap * 2 : 2;
		struct boundary *b = realloc(t->bounds, cap * sizeof(*b));

		if (!b)
			return -ENOMEM;
		account(st, 0, (long long)(cap - t->bounds_cap) * sizeof(*b));
		t->bounds = b;
		t->bounds_cap = cap;
	}
	t->bounds[t->nr_bounds].time = time;
	t->bounds[t->nr_bounds].exit = exit;
	t->nr_bounds++;
	return 0;
}

/* Is there an exit (or exec) boundary b with lo <= b < hi? */
static bool task_boundary_between(const struct task *t, uint64_t lo, uint64_t hi, bool exit)
{
	size_t i;

	for (i = 0; i < t->nr_bounds; i++) {
		if (t->bounds[i].exit == exit && t->bounds[i].time >= lo && t->bounds[i].time < hi)
			return true;
	}
	return false;
}

static bool task_exit_at_or_after(const struct task *t, uint64_t time, uint64_t *when)
{
	bool found = false;
	size_t i;

	for (i = 0; i < t->nr_bounds; i++) {
		if (t->bounds[i].exit && t->bounds[i].time >= time &&
		    (!found || t->bounds[i].time < *when)) {
			*when = t->bounds[i].time;
			found = true;
		}
	}
	return found;
}

/*
 * Same incarnation: same pid, no exit of the tid between the two times.
 * An exit less than a window before the later time does not count: the
 * kernel writes the record of an exiting task's last entry to CPU-wide
 * events after its PERF_RECORD_EXIT (seen 12us after on 7.2), and a new
 * task reusing the tid that soon would also need the same cookie, which
 * takes a wrap of a per-CPU 32-bit counter.
 */
static bool same_incarnation(const struct unwind_stitcher *st, const struct task *t,
			     uint32_t pid_a, uint64_t time_a, uint32_t pid_b, uint64_t time_b)
{
	uint64_t lo = time_a < time_b ? time_a : time_b;
	uint64_t hi = time_a < time_b ? time_b : time_a;

	if (pid_a != pid_b)
		return false;
	if (hi - lo <= st->opts.window)
		return true;
	return !task_boundary_between(t, lo, hi - st->opts.window, true);
}

/* ---- slots ---- */

static struct slot *slot_new(struct unwind_stitcher *st, struct task *t, uint64_t cookie,
			     uint32_t pid, uint64_t time)
{
	struct slot *sl = uc_pool__alloc(&st->pool, sizeof(*sl));

	if (!sl)
		return NULL;
	memset(sl, 0, sizeof(*sl));
	sl->task = t;
	sl->cookie = cookie;
	sl->pid = pid;
	sl->first_time = time;
	sl->min_time = time;
	sl->max_time = time;
	uc_list_init(&sl->samples);
	uc_list_init(&sl->idle_node);
	uc_list_init(&sl->check.node);
	sl->check.kind = DEADLINE_SLOT;
	htable_add(&st->slots, &sl->hnode, slot_hash(t->tid, cookie));
	uc_list_add_tail(&sl->task_node, &t->slots);
	uc_list_add_tail(&sl->age_node, &st->ages);
	t->nr_slots++;
	uc_list_del(&t->gc.node);
	account(st, 0, sizeof(*sl));
	schedule(st, &sl->check);
	return sl;
}

static void slot_free(struct unwind_stitcher *st, struct slot *sl)
{
	struct task *t = sl->task;

	if (sl->record) {
		if (!sl->record->claimed)
			st->stats.unclaimed_records++;
		record_free(st, sl->record);
	}
	htable_del(&st->slots, &sl->hnode);
	uc_list_del(&sl->task_node);
	uc_list_del(&sl->idle_node);
	uc_list_del(&sl->age_node);
	uc_list_del(&sl->check.node);
	account(st, 0, -(long long)sizeof(*sl));
	uc_pool__free(&st->pool, sl, sizeof(*sl));
	t->nr_slots--;
	task_release(st, t);
}

static void slot_orphan_all(struct unwind_stitcher *st, struct slot *sl,
			    enum unwind_orphan_reason reason)
{
	while (!uc_list_empty(&sl->samples)) {
		struct sample *s = uc_container_of(sl->samples.next, struct sample, slot_node);

		resolve(st, s, UNWIND_STITCH_ORPHAN, reason, NULL);
	}
	sl->nr_samples = 0;
}

/*
 * Join @s to the record of its slot, or orphan it when the record cannot
 * describe its user stack: the task exec'd between the sample and the
 * record (the record shows the new program; or, for a late sample, the
 * sample does), or the unwind found nothing.
 */
static void slot_settle(struct unwind_stitcher *st, struct slot *sl, struct sample *s)
{
	struct record *rec = sl->record;
	uint64_t time = s->q.time;
	bool exec_between = time <= rec->time ?
		task_boundary_between(sl->task, time, rec->time, false) :
		task_boundary_between(sl->task, rec->time, time, false);

	if (!same_incarnation(st, sl->task, s->pid, time, rec->pid, rec->time))
		resolve(st, s, UNWIND_STITCH_ORPHAN, UNWIND_ORPHAN_TASK_EXITED, NULL);
	else if (exec_between)
		resolve(st, s, UNWIND_STITCH_ORPHAN, UNWIND_ORPHAN_EXEC, NULL);
	else if (!rec->stack->nr)
		resolve(st, s, UNWIND_STITCH_ORPHAN, UNWIND_ORPHAN_UNWIND_FAILED, NULL);
	else
		resolve(st, s, UNWIND_STITCH_STITCHED, UNWIND_ORPHAN_NONE, rec);
}

/*
 * Settle the samples a record joined. This waits until the slot's window
 * has passed, so that an exec or exit of the task written before the
 * record, but fed after it, is known before any sample is joined.
 */
static void slot_settle_all(struct unwind_stitcher *st, struct slot *sl)
{
	if (!sl->record)
		return;
	while (!uc_list_empty(&sl->samples))
		slot_settle(st, sl, uc_container_of(sl->samples.next, struct sample, slot_node));
	sl->nr_samples = 0;
}

/*
 * The slot of (tid, cookie) an item of @pid at @time belongs to. A sample
 * taken after the record must lie within a window of it (a late sample:
 * taken after the entry's unwind ran, on its way out); anything later is
 * a repeat of the cookie after its counter wrapped. A record likewise never
 * joins samples taken more than a window after it. Samples before their
 * record are not bounded: a task blocked in the kernel gets its record
 * when it returns, seconds later.
 */
static struct slot *slot_find(struct unwind_stitcher *st, struct task *t, uint64_t cookie,
			      uint32_t pid, uint64_t time, bool is_record)
{
	uint64_t h = slot_hash(t->tid, cookie);
	uint64_t w = st->opts.window;
	struct hnode *n;

	for (n = htable_first(&st->slots, h); n; n = htable_next(n, h)) {
		struct slot *sl = uc_container_of(n, struct slot, hnode);

		if (sl->task != t || sl->cookie != cookie)
			continue;
		if (sl->record) {
			uint64_t rt = sl->record->time;

			if (time > sat_add(rt, w))
				continue;
			if (same_incarnation(st, t, pid, time, sl->record->pid, rt))
				return sl;
			continue;
		}
		if (is_record && sl->first_time > sat_add(time, w))
			continue;
		if (same_incarnation(st, t, pid, time, sl->pid, sl->first_time))
			return sl;
	}
	return NULL;
}

/*
 * Sorted input: an item of @t's kernel entry @cookie timed after a record
 * of another entry says the task went back to user space after that one,
 * and every late sample of it (taken on the way out) and every copy of its
 * record (written with it) has been fed by now. Such a slot is done at
 * once, not a window later: a busy task holds its last record, not a
 * window's worth of them.
 */
static void task_retire_slots(struct unwind_stitcher *st, struct task *t, uint64_t cookie,
			      uint64_t time)
{
	struct uc_list *pos = t->slots.next;

	if (!st->opts.sorted)
		return;
	while (pos != &t->slots) {
		struct slot *sl = uc_container_of(pos, struct slot, task_node);

		pos = pos->next;
		if (!sl->record || sl->cookie == cookie || sl->record->time >= time)
			continue;
		slot_settle_all(st, sl);
		slot_free(st, sl);
	}
}

/* Was a lost notice written between @lo and @hi (inclusive)? */
static bool lost_between(const struct unwind_stitcher *st, uint64_t lo, uint64_t hi)
{
	size_t a = 0, b = st->nr_lost;

	while (a < b) {
		size_t m = a + (b - a) / 2;

		if (st->lost_times[m] < lo)
			a = m + 1;
		else
			b = m;
	}
	return a < st->nr_lost && st->lost_times[a] <= hi;
}

/*
 * The task exited at @exit_time with samples waiting: their record was due
 * before the exit. A lost notice between the first sample and a window
 * after the exit (PERF_RECORD_LOST is written once the buffer has room
 * again) says it was written and lost; without one, it never was. From the
 * first sample, not the last: a late sample, taken on the way out after
 * the record was written, comes after the record and so after its loss.
 */
static enum unwind_orphan_reason exit_reason(const struct unwind_stitcher *st,
					     const struct slot *sl,
					     enum unwind_orphan_reason evidence,
					     uint64_t exit_time)
{
	if (evidence == UNWIND_ORPHAN_TASK_EXITED &&
	    lost_between(st, sl->min_time, sat_add(exit_time, st->opts.window)))
		return UNWIND_ORPHAN_RECORD_LOST;
	return evidence;
}

/*
 * A slot's deadline passed. A slot holding its record settles the samples
 * joined so far at the first deadline, a window after the record arrived:
 * any exec or exit written before the record has arrived by then. It keeps
 * the record one more window for late samples and copies: one timed up to
 * a window after the record may arrive up to a window after that. In time
 * order (opts.sorted) it arrives before the watermark passes its time, so
 * the first check, a window after the record, is the last. A slot
 * still waiting needs evidence that its record is overdue: the task
 * exited after the samples, or completed a later kernel entry (a record
 * with a later time). The first check notes the evidence; the next one, a
 * full window later, is conclusive, because any record written before the
 * evidence has then had its window to arrive. A check that finds none
 * leaves the slot idle, off the queue, until its task exits or writes a
 * record (task_wake_slots()): waiting slots are not polled every window.
 */
static void slot_check(struct unwind_stitcher *st, struct slot *sl)
{
	struct task *t = sl->task;
	bool exited, later_record;
	uint64_t when = 0;

	if (sl->record) {
		slot_settle_all(st, sl);
		/* kept for the record's arrival, which schedules the next check */
		if (sl->record->ahead)
			return;
		if (++sl->record_checks < (st->opts.sorted ? 1 : 2))
			schedule(st, &sl->check);
		else
			slot_free(st, sl);
		return;
	}
	if (!sl->nr_samples) {
		slot_free(st, sl);
		return;
	}
	if (sl->has_evidence) {
		/* the record of a last entry may follow the exit by a little */
		if (sl->evidence_reason == UNWIND_ORPHAN_TASK_EXITED &&
		    horizon(st) <= sat_add(sl->evidence_time, st->opts.window)) {
			schedule(st, &sl->check);
			return;
		}
		slot_orphan_all(st, sl, exit_reason(st, sl, sl->evidence_reason,
						    sl->evidence_time));
		slot_free(st, sl);
		return;
	}
	exited = task_exit_at_or_after(t, sl->max_time, &when);
	later_record = t->has_record_time && t->max_record_time > sl->max_time;
	/* the earlier evidence tells: a later entry's record before an exit means lost */
	if (later_record && (!exited || t->max_record_time < when)) {
		sl->has_evidence = true;
		sl->evidence_reason = UNWIND_ORPHAN_RECORD_LOST;
		sl->evidence_time = t->max_record_time;
	} else if (exited) {
		sl->has_evidence = true;
		sl->evidence_reason = UNWIND_ORPHAN_TASK_EXITED;
		sl->evidence_time = when;
	} else {
		uc_list_add_tail(&sl->idle_node, &t->idle);
		return;		/* until task_wake_slots() */
	}
	schedule(st, &sl->check);
}

/* @t exited or wrote a record: its idle slots may have evidence now. */
static void task_wake_slots(struct unwind_stitcher *st, struct task *t)
{
	while (!uc_list_empty(&t->idle)) {
		struct slot *sl = uc_container_of(t->idle.next, struct slot, idle_node);

		uc_list_del(&sl->idle_node);
		schedule(st, &sl->check);
	}
}

static void expire(struct unwind_stitcher *st)
{
	while (!uc_list_empty(&st->deadlines)) {
		struct deadline *d = uc_container_of(st->deadlines.next, struct deadline, node);

		if (horizon(st) <= d->when)
			break;
		uc_list_del(&d->node);
		if (d->kind == DEADLINE_SLOT) {
			slot_check(st, uc_container_of(d, struct slot, check));
		} else {
			struct task *t = uc_container_of(d, struct task, gc);

			if (!t->nr_slots)
				task_free(st, t);
		}
	}
}

/* Release the oldest slots until the pending bytes fit under the cap. */
static void enforce_cap(struct unwind_stitcher *st)
{
	while (st->stats.pending_bytes > st->opts.max_pending_bytes && !uc_list_empty(&st->ages)) {
		struct slot *sl = uc_container_of(st->ages.next, struct slot, age_node);

		if (!st->cap_warned) {
			pr_warning("memory cap of %zu bytes reached: the oldest pending samples are released as orphans (raise the cap to keep them)\n",
				   st->opts.max_pending_bytes);
			st->cap_warned = true;
		}
		/* Samples whose record is here keep it: only waiting ones are lost. */
		if (sl->record)
			slot_settle_all(st, sl);
		else
			slot_orphan_all(st, sl, UNWIND_ORPHAN_MEMORY_CAP);
		slot_free(st, sl);
		if (st->opts.order == UNWIND_STITCHER_ORDER_INPUT)
			drain(st);
	}
}

/* Every API call that changes state ends here. */
static int settle(struct unwind_stitcher *st, int err)
{
	expire(st);
	if (st->opts.order == UNWIND_STITCHER_ORDER_INPUT)
		drain(st);
	enforce_cap(st);
	return err;
}

static void advance(struct unwind_stitcher *st, uint64_t time)
{
	if (time > st->watermark)
		st->watermark = time;
}

static int invalid(struct unwind_stitcher *st)
{
	st->stats.invalid_inputs++;
	return -EINVAL;
}

/*
 * Input structs are size-versioned like the opts: at least their first
 * version (everything up to payload_bytes, or nr), anything we do not know
 * zero. A smaller, older struct than ours cannot come: there is none.
 */
#define SAMPLE_MIN_SZ	(offsetof(struct unwind_stitcher_sample, payload_bytes) + sizeof(size_t))
#define RECORD_MIN_SZ	(offsetof(struct unwind_stitcher_record, nr) + sizeof(size_t))

static bool input_sz_valid(const void *in, size_t sz, size_t min, size_t known)
{
	return sz >= min && uc_opts_tail_zero(in, sz, known);
}

/* ---- API ---- */

struct unwind_stitcher *unwind_stitcher__new(const struct unwind_stitcher_opts *opts)
{
	struct unwind_stitcher *st;

	if (!opts ||
	    opts->sz < offsetof(struct unwind_stitcher_opts, layout) + sizeof(opts->layout) ||
	    !uc_opts_tail_zero(opts, opts->sz, sizeof(*opts))) {
		errno = EINVAL;
		return NULL;
	}
	if (opts->order != UNWIND_STITCHER_ORDER_RESOLVED &&
	    opts->order != UNWIND_STITCHER_ORDER_INPUT) {
		errno = EINVAL;
		return NULL;
	}
	st = calloc(1, sizeof(*st));
	if (!st)
		return NULL;
	memcpy(&st->opts, opts, opts->sz < sizeof(*opts) ? opts->sz : sizeof(*opts));
	st->opts.sz = sizeof(st->opts);
	if (!st->opts.window)
		st->opts.window = UNWIND_STITCHER_DEFAULT_WINDOW;
	if (st->opts.window > MAX_WINDOW)
		st->opts.window = MAX_WINDOW;
	if (!st->opts.max_pending_bytes)
		st->opts.max_pending_bytes = UNWIND_STITCHER_DEFAULT_MAX_BYTES;
	uc_list_init(&st->deadlines);
	uc_list_init(&st->ages);
	uc_list_init(&st->output);
	if (htable_init(&st->slots) || htable_init(&st->tasks) || htable_init(&st->stacks)) {
		free(st->slots.buckets);
		free(st->tasks.buckets);
		free(st);
		errno = ENOMEM;
		return NULL;
	}
	return st;
}

/* Tasks without slots; walks the whole table, so only at the end. */
static void free_tasks(struct unwind_stitcher *st)
{
	size_t i;

	for (i = 0; i <= st->tasks.mask; i++) {
		while (st->tasks.buckets[i])
			task_free(st, uc_container_of(st->tasks.buckets[i], struct task, hnode));
	}
}

static void free_everything(struct unwind_stitcher *st)
{
	while (!uc_list_empty(&st->ages)) {
		struct slot *sl = uc_container_of(st->ages.next, struct slot, age_node);

		while (!uc_list_empty(&sl->samples)) {
			struct sample *s = uc_container_of(sl->samples.next, struct sample,
							   slot_node);

			uc_list_del(&s->slot_node);
			if (uc_list_linked(&s->q.out_node))
				uc_list_del(&s->q.out_node);
			sample_free(st, s);
		}
		slot_free(st, sl);
	}
	while (!uc_list_empty(&st->output)) {
		struct queued *q = uc_container_of(st->output.next, struct queued, out_node);

		uc_list_del(&q->out_node);
		queued_free(st, q);
	}
	free_tasks(st);
}

void unwind_stitcher__delete(struct unwind_stitcher *st)
{
	if (!st)
		return;
	free_everything(st);
	uc_pool__clear(&st->pool);
	free(st->lost_times);
	free(st->slots.buckets);
	free(st->tasks.buckets);
	free(st->stacks.buckets);
	free(st);
}

static bool sample_valid(const struct unwind_stitcher_sample *in)
{
	return input_sz_valid(in, in->sz, SAMPLE_MIN_SZ, sizeof(*in)) &&
	       (!in->nr_kernel || in->kernel) && in->nr_kernel <= MAX_KERNEL_NR;
}

static bool record_valid(const struct unwind_stitcher_record *in)
{
	return input_sz_valid(in, in->sz, RECORD_MIN_SZ, sizeof(*in)) && in->cookie &&
	       (!in->nr || in->ips) && in->nr <= MAX_RECORD_NR;
}

/* A sample taken: counted, queued for output (ORDER_INPUT); NULL when out of memory. */
static struct sample *sample_new(struct unwind_stitcher *st,
				 const struct unwind_stitcher_sample *in)
{
	struct sample *s;
	size_t bytes;

	bytes = sizeof(*s) + in->nr_kernel * sizeof(s->kernel[0]) + in->payload_bytes;
	s = uc_pool__alloc(&st->pool, sizeof(*s) + in->nr_kernel * sizeof(s->kernel[0]));
	if (!s)
		return NULL;
	st->stats.samples++;
	advance(st, in->time);
	if (in->cookie)
		st->stats.deferred_samples++;
	memset(s, 0, sizeof(*s));
	uc_list_init(&s->slot_node);
	uc_list_init(&s->q.out_node);
	s->q.bytes = bytes;
	s->q.time = in->time;
	s->q.payload = in->payload;
	s->pid = in->pid;
	s->tid = in->tid;
	s->cpu = in->cpu;
	s->cookie = in->cookie;
	s->nr_kernel = in->nr_kernel;
	if (in->nr_kernel)
		memcpy(s->kernel, in->kernel, in->nr_kernel * sizeof(s->kernel[0]));
	account(st, 1, bytes);
	if (st->opts.order == UNWIND_STITCHER_ORDER_INPUT)
		uc_list_add_tail(&s->q.out_node, &st->output);
	return s;
}

/* The slot of a deferred sample's kernel entry, found or new; NULL when out of memory. */
static struct slot *sample_slot(struct unwind_stitcher *st, const struct unwind_stitcher_sample *in)
{
	struct task *t = task_get(st, in->tid);
	struct slot *sl;

	if (!t)
		return NULL;
	task_retire_slots(st, t, in->cookie, in->time);
	sl = slot_find(st, t, in->cookie, in->pid, in->time, false);
	return sl ?: slot_new(st, t, in->cookie, in->pid, in->time);
}

/* @s waits in @sl for its record, or, with the record in, is settled. */
static int sample_join(struct unwind_stitcher *st, struct sample *s, struct slot *sl)
{
	if (!sl) {
		/* Out of memory: the sample still leaves, as an orphan. */
		resolve(st, s, UNWIND_STITCH_ORPHAN, UNWIND_ORPHAN_MEMORY_CAP, NULL);
		return settle(st, -ENOMEM);
	}
	uc_list_add_tail(&s->slot_node, &sl->samples);
	sl->nr_samples++;
	if (s->q.time > sl->max_time)
		sl->max_time = s->q.time;
	if (s->q.time < sl->min_time)
		sl->min_time = s->q.time;
	/* a late sample, its record already in; or its record read ahead */
	if (st->opts.sorted && sl->record)
		slot_settle_all(st, sl);
	return settle(st, 0);
}

int unwind_stitcher__add_sample(struct unwind_stitcher *st,
				const struct unwind_stitcher_sample *in)
{
	struct sample *s;

	if (!st || !in)
		return -EINVAL;
	if (!sample_valid(in))
		return invalid(st);
	s = sample_new(st, in);
	if (!s)
		return -ENOMEM;	/* not taken: the caller still owns it */
	if (!in->cookie) {
		resolve(st, s, UNWIND_STITCH_NOT_DEFERRED, UNWIND_ORPHAN_NONE, NULL);
		return settle(st, 0);
	}
	return sample_join(st, s, sample_slot(st, in));
}

static struct record *record_new(struct unwind_stitcher *st,
				 const struct unwind_stitcher_record *in, size_t nr)
{
	struct record *rec = uc_pool__alloc(&st->pool, sizeof(*rec));

	if (!rec)
		return NULL;
	rec->stack = stack_get(st, in->ips, nr);
	if (!rec->stack) {
		uc_pool__free(&st->pool, rec, sizeof(*rec));
		return NULL;
	}
	rec->pid = in->pid;
	rec->cpu = in->cpu;
	rec->time = in->time;
	rec->claimed = false;
	rec->ahead = false;
	account(st, 0, sizeof(*rec));
	return rec;
}

/*
 * No record of @in's kernel entry in the rest of the stream, nor a later
 * one of its task, nor its exit or exec: what finish() would say of it,
 * said now.  A record already in (a late sample) still joins it.
 */
static int sample_without_record(struct unwind_stitcher *st,
				 const struct unwind_stitcher_sample *in)
{
	struct task *t = task_find(st, in->tid);
	struct slot *sl = t ? slot_find(st, t, in->cookie, in->pid, in->time, false) : NULL;
	struct sample *s;

	if (sl && sl->record)
		return unwind_stitcher__add_sample(st, in);
	s = sample_new(st, in);
	if (!s)
		return -ENOMEM;
	resolve(st, s, UNWIND_STITCH_ORPHAN, UNWIND_ORPHAN_STREAM_ENDED, NULL);
	return settle(st, 0);
}

int unwind_stitcher__add_sample_ahead(struct unwind_stitcher *st,
				      const struct unwind_stitcher_sample *in,
				      const struct unwind_stitcher_record *ahead)
{
	struct record *rec;
	struct sample *s;
	struct slot *sl;
	size_t nr, dropped;

	if (!st || !in)
		return -EINVAL;
	if (!sample_valid(in) || (ahead && !record_valid(ahead)))
		return invalid(st);
	if (!ahead && st->opts.sorted && in->cookie)
		return sample_without_record(st, in);
	/* only what the promise can settle at once; the rest waits as usual */
	if (!ahead || !st->opts.sorted || !in->cookie || ahead->cookie != in->cookie ||
	    ahead->tid != in->tid || ahead->pid != in->pid || ahead->time < in->time)
		return unwind_stitcher__add_sample(st, in);

	s = sample_new(st, in);
	if (!s)
		return -ENOMEM;
	sl = sample_slot(st, in);
	if (sl && !sl->record) {
		nr = unwind_callchain__sanitize(ahead->ips, ahead->nr, &dropped);
		rec = record_new(st, ahead, nr);
		/* without memory for it, the sample waits for the record to come */
		if (rec) {
			rec->ahead = true;
			sl->record = rec;
			uc_list_del(&sl->idle_node);
		}
	}
	return sample_join(st, s, sl);
}

int unwind_stitcher__add_passthrough(struct unwind_stitcher *st, uint64_t time, void *payload,
				     size_t payload_bytes)
{
	struct queued *q;

	if (!st)
		return -EINVAL;
	q = uc_pool__alloc(&st->pool, sizeof(*q));
	if (!q)
		return -ENOMEM;
	memset(q, 0, sizeof(*q));
	st->stats.passthrough++;
	advance(st, time);
	uc_list_init(&q->out_node);
	q->passthrough = true;
	q->resolved = true;
	q->bytes = sizeof(*q) + payload_bytes;
	q->time = time;
	q->payload = payload;
	account(st, 0, q->bytes);
	if (st->opts.order == UNWIND_STITCHER_ORDER_INPUT) {
		uc_list_add_tail(&q->out_node, &st->output);
	} else {
		deliver(st, q);
		queued_free(st, q);
	}
	return settle(st, 0);
}

static bool same_ips(const struct record *rec, const uint64_t *ips, size_t nr)
{
	const struct stack *sk = rec->stack;

	return sk->nr == nr && (!nr || !memcmp(sk->ips, ips, nr * sizeof(*ips)));
}

int unwind_stitcher__add_record(struct unwind_stitcher *st,
				const struct unwind_stitcher_record *in)
{
	struct unwind_cookie_fields fields;
	struct record *rec;
	struct task *t;
	struct slot *sl;
	size_t nr, dropped = 0;

	if (!st || !in)
		return -EINVAL;
	if (!record_valid(in))
		return invalid(st);

	st->stats.records++;
	advance(st, in->time);
	nr = unwind_callchain__sanitize(in->ips, in->nr, &dropped);
	if (dropped)
		st->stats.truncated_records++;
	if (!nr)
		st->stats.empty_records++;
	if (in->cpu != UNWIND_STITCHER_CPU_UNKNOWN &&
	    !unwind_cookie__decode(st->opts.layout, in->cookie, &fields) && fields.cpu != in->cpu)
		st->stats.cross_cpu_records++;

	t = task_get(st, in->tid);
	if (!t)
		return settle(st, -ENOMEM);
	task_retire_slots(st, t, in->cookie, in->time);
	if (!t->has_record_time || in->time > t->max_record_time) {
		t->max_record_time = in->time;
		t->has_record_time = true;
		task_wake_slots(st, t);
	}

	sl = slot_find(st, t, in->cookie, in->pid, in->time, true);
	/* The record its samples were stitched to ahead: now in its place. */
	if (sl && sl->record && sl->record->ahead) {
		sl->record->ahead = false;
		sl->record->cpu = in->cpu;
		schedule(st, &sl->check);
		return settle(st, 0);
	}
	/* One copy per defer_output event: keep the first, count the rest. */
	if (sl && sl->record) {
		if (same_ips(sl->record, in->ips, nr))
			st->stats.duplicates++;
		else
			st->stats.duplicates_conflicting++;
		return settle(st, 0);
	}

	rec = record_new(st, in, nr);
	if (!rec)
		return settle(st, -ENOMEM);

	if (!sl)
		sl = slot_new(st, t, in->cookie, in->pid, in->time);
	if (!sl) {
		record_free(st, rec);
		return settle(st, -ENOMEM);
	}
	sl->record = rec;
	uc_list_del(&sl->idle_node);
	/*
	 * Gather late samples for one window, then settle (slot_check); in
	 * time order nothing that could change the outcome is still to come.
	 */
	if (st->opts.sorted)
		slot_settle_all(st, sl);
	schedule(st, &sl->check);
	return settle(st, 0);
}

int unwind_stitcher__lost(struct unwind_stitcher *st, uint32_t cpu, uint64_t time)
{
	size_t i;

	(void)cpu;
	if (!st)
		return -EINVAL;
	if (st->nr_lost == st->lost_cap) {
		size_t cap = st->lost_cap ? st->lost_cap * 2 : 16;
		uint64_t *times = realloc(st->lost_times, cap * sizeof(*times));

		if (!times)
			return -ENOMEM;
		st->lost_times = times;
		st->lost_cap = cap;
	}
	st->stats.lost_notices++;
	advance(st, time);
	/* Mostly in time order already: insertion from the end. */
	for (i = st->nr_lost; i > 0 && st->lost_times[i - 1] > time; i--)
		st->lost_times[i] = st->lost_times[i - 1];
	st->lost_times[i] = time;
	st->nr_lost++;
	return settle(st, 0);
}

int unwind_stitcher__horizon(struct unwind_stitcher *st, uint64_t time)
{
	if (!st)
		return -EINVAL;
	if (!st->has_round_horizon || time > st->round_horizon) {
		st->round_horizon = time;
		st->has_round_horizon = true;
	}
	return settle(st, 0);
}

int unwind_stitcher__advance(struct unwind_stitcher *st, uint64_t time)
{
	if (!st)
		return -EINVAL;
	advance(st, time);
	return settle(st, 0);
}

static int task_boundary(struct unwind_stitcher *st, uint32_t tid, uint64_t time, bool exit)
{
	struct task *t;
	int err;

	if (!st)
		return -EINVAL;
	advance(st, time);
	t = task_get(st, tid);
	if (!t)
		return settle(st, -ENOMEM);
	err = task_add_boundary(st, t, time, exit);
	if (exit)
		task_wake_slots(st, t);
	task_release(st, t);
	return settle(st, err);
}

int unwind_stitcher__task_exit(struct unwind_stitcher *st, uint32_t pid, uint32_t tid,
			       uint64_t time)
{
	(void)pid;
	return task_boundary(st, tid, time, true);
}

int unwind_stitcher__task_exec(struct unwind_stitcher *st, uint32_t pid, uint32_t tid,
			       uint64_t time)
{
	(void)pid;
	return task_boundary(st, tid, time, false);
}

/* Why a sample still waiting at the end of the stream never got its record. */
static enum unwind_orphan_reason end_reason(struct unwind_stitcher *st, struct slot *sl)
{
	const struct task *t = sl->task;
	bool exited, later_record;
	uint64_t when = 0;

	/*
	 * The evidence slot_check() weighs, the earlier telling: a later
	 * entry's record before the exit means this one's was lost. Without
	 * evidence that the task left the kernel entry, a lost notice proves
	 * nothing: the task may still be inside it.
	 */
	exited = task_exit_at_or_after(t, sl->max_time, &when);
	later_record = t->has_record_time && t->max_record_time > sl->max_time;
	if (later_record && (!exited || t->max_record_time < when))
		return UNWIND_ORPHAN_RECORD_LOST;
	if (exited)
		return exit_reason(st, sl, UNWIND_ORPHAN_TASK_EXITED, when);
	return UNWIND_ORPHAN_STREAM_ENDED;
}

/* @sl's record, read ahead by @find: 1 when it came and the samples settled */
static int slot_read_ahead(struct unwind_stitcher *st, struct slot *sl,
			   unwind_stitcher_find_fn find, void *ctx)
{
	struct sample *first = uc_container_of(sl->samples.next, struct sample, slot_node);
	struct unwind_stitcher_sample key = {
		.sz	= sizeof(key),
		.pid	= sl->pid,
		.tid	= sl->task->tid,
		.cpu	= first->cpu,
		.time	= sl->min_time,
		.cookie	= sl->cookie,
	};
	struct unwind_stitcher_record ahead = { .sz = sizeof(ahead) };
	struct record *rec;
	size_t nr, dropped;
	int err = find(ctx, &key, &ahead);

	if (err == -ENODATA) {
		slot_orphan_all(st, sl, end_reason(st, sl));
		slot_free(st, sl);
		return 1;
	}
	if (err)
		return err == -ENOENT ? 0 : err;
	/* ours, not the caller's size: a bigger one would be read past */
	if (ahead.sz != sizeof(ahead) || !record_valid(&ahead) || ahead.cookie != sl->cookie ||
	    ahead.tid != key.tid || ahead.pid != sl->pid || ahead.time < sl->max_time)
		return 0;
	nr = unwind_callchain__sanitize(ahead.ips, ahead.nr, &dropped);
	rec = record_new(st, &ahead, nr);
	if (!rec)
		return -ENOMEM;
	rec->ahead = true;
	sl->record = rec;
	uc_list_del(&sl->idle_node);
	slot_settle_all(st, sl);
	return 1;
}

int unwind_stitcher__read_ahead(struct unwind_stitcher *st, unwind_stitcher_find_fn find,
				void *ctx)
{
	struct uc_list *pos;
	int err = 0;

	if (!st || !find)
		return -EINVAL;
	if (!st->opts.sorted)
		return 0;
	/* oldest first: a slot freed here is the one in hand, the next one is kept */
	for (pos = st->ages.next; pos != &st->ages && !err; ) {
		struct slot *sl = uc_container_of(pos, struct slot, age_node);

		pos = pos->next;
		if (sl->record || !sl->nr_samples)
			continue;
		err = slot_read_ahead(st, sl, find, ctx);
		if (err > 0)
			err = 0;
	}
	return settle(st, err);
}

int unwind_stitcher__finish(struct unwind_stitcher *st)
{
	if (!st)
		return -EINVAL;
	/* Oldest first, so that the result does not depend on hash order. */
	while (!uc_list_empty(&st->ages)) {
		struct slot *sl = uc_container_of(st->ages.next, struct slot, age_node);

		if (sl->record)
			slot_settle_all(st, sl);
		else if (sl->nr_samples)
			slot_orphan_all(st, sl, end_reason(st, sl));
		slot_free(st, sl);
	}
	if (st->opts.order == UNWIND_STITCHER_ORDER_INPUT)
		drain(st);
	free_tasks(st);
	return 0;
}

int unwind_stitcher__stats(const struct unwind_stitcher *st, struct unwind_stitcher_stats *stats)
{
	struct unwind_stitcher_stats full;
	const struct unwind_stitcher_latency *l;
	size_t sz;

	if (!st || !stats || stats->sz < offsetof(struct unwind_stitcher_stats, samples) +
					 sizeof(stats->samples))
		return -EINVAL;
	sz = stats->sz < sizeof(full) ? stats->sz : sizeof(full);
	full = st->stats;
	l = &st->stats.latency;
	if (l->count) {
		full.latency.median = latency_rank(st, (l->count + 1) / 2);
		full.latency.p99 = latency_rank(st, (l->count * 99 + 99) / 100);
	}
	full.sz = stats->sz;
	memcpy(stats, &full, sz);
	return 0;
}
