// SPDX-License-Identifier: GPL-2.0
/*
 * Emulation of deferred user callchains: the kernel entries.
 *
 * libunwind-cookie's kernel model (unwind_kmodel) assigns the cookies and
 * writes the records; this file decides, from what the recording shows,
 * when each task entered and left the kernel.
 *
 * Kernel entries.  Per task, in time order:
 *  - a sample taken in user mode is an entry of its own: the interrupt
 *    entered the kernel at the sample and returned right after it (the
 *    record is written 1ns later, on the sample's CPU);
 *  - consecutive samples taken in kernel mode with the same user chain form
 *    one entry, unless a return point separates them: a
 *    raw_syscalls:sys_exit sample of the task, or a user-mode sample.  A
 *    different user chain starts a new entry, except right after an exec
 *    (PERF_RECORD_COMM with COMM_EXEC) inside the entry: execve() replaces
 *    the user stack without leaving the kernel;
 *  - samples without a user part (kernel threads, exiting tasks) and samples
 *    of events without user callchains are not deferred.
 *
 * Return points, where the record is written:
 *  - the task's raw_syscalls:sys_exit sample that ends the entry: 1ns after
 *    it, on its CPU;
 *  - the task's PERF_RECORD_EXIT while inside an entry: the pending record is
 *    written at the exit (unless --no-exit-records);
 *  - otherwise (faults, interrupts, recordings without sys_exit) a fallback:
 *    1us after the last evidence that the task was still in the entry, on the
 *    CPU of that evidence, but before the task's next event and before a
 *    preemption (PERF_RECORD_SWITCH out with the PREEMPT flag; the task may
 *    have been back in user space).  The evidence is the entry's last sample,
 *    or a switch-in that followed a voluntary switch-out (a task only sleeps
 *    inside the kernel): a task that slept in a system call and woke up on
 *    another CPU writes its record there.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <linux/kernel.h>
#include <linux/zalloc.h>
#include <unwind-cookie/cookie.h>
#include <unwind-cookie/kmodel.h>

#include "debug.h"
#include "intlist.h"
#include "deferred-emulate.h"
#include "deferred-emulate-internal.h"

/* Fallback: a kernel entry ends this long after its last evidence. */
#define EMU_FALLBACK_NS		1000ULL

/* Listener id handed to the kernel model; records carry the tracking event's id. */
#define EMU_LISTENER_ID		1

enum emu_task_state {
	EMU_T_NONE,		/* in user space, as far as we know */
	EMU_T_OPEN,		/* in a kernel entry */
	/* a return point was seen: the record comes before the next event */
	EMU_T_RETURNING,
};

struct emu_task {
	u32			pid;
	u32			tid;
	bool			in_model;
	bool			dead;
	u32			model_cpu;
	enum emu_task_state	state;
	int			entry;
	const u64		*chain;		/* the entry's user chain */
	u32			nr_chain;
	long			held[2];	/* its last two samples, not yet in the model */
	u64			last_time;	/* of the entry's last sample in the model */
	/* EMU_T_OPEN: evidence that the task is still in the entry */
	u64			ev_time;
	u32			ev_cpu;
	u64			bound;		/* a preemption after the evidence */
	bool			frozen;		/* ... was seen: no more evidence */
	bool			slept;		/* a voluntary switch out after the evidence */
	/* EMU_T_RETURNING */
	u64			ret_time;
	u32			ret_cpu;
	enum emu_return		ret_how;
	/* an exec inside the entry, not yet given to the model */
	bool			exec_pending;
	u64			exec_time;
};

/* ---- the kernel model ---- */

static struct emu_task *emu__task(struct emu *emu, const struct emu_event *e)
{
	struct int_node *node = intlist__findnew(emu->tasks, e->tid);
	struct emu_task *t;

	if (!node)
		return NULL;
	if (node->priv)
		return node->priv;
	t = zalloc(sizeof(*t));
	if (!t)
		return NULL;
	t->pid = e->pid;
	t->tid = e->tid;
	t->held[0] = t->held[1] = EMU_NONE;
	t->entry = EMU_NONE;
	node->priv = t;
	return t;
}

static int emu__model_err(int err, const char *what, u32 tid)
{
	if (err >= 0)
		return 0;
	pr_err("kernel model: %s of tid %u failed: %s\n", what, tid, strerror(-err));
	return err;
}

static int emu__migrate(struct emu *emu, struct emu_task *t, u32 cpu)
{
	int err;

	if (cpu == t->model_cpu)
		return 0;
	err = unwind_kmodel__task_migrate(emu->km, t->tid, cpu);
	if (!err)
		t->model_cpu = cpu;
	return emu__model_err(err, "migrate", t->tid);
}

/* After a call that may have written the entry's record: note it. */
static void emu__note_record(struct emu *emu, struct emu_task *t, size_t before)
{
	const struct unwind_kmodel_event *log;
	struct emu_entry *entry = &emu->entries[t->entry];
	size_t nr, i;

	log = unwind_kmodel__events(emu->km, &nr);
	for (i = before; i < nr; i++) {
		if (log[i].type == UNWIND_KMODEL_RECORD && log[i].tid == t->tid &&
		    entry->record_idx == EMU_NONE)
			entry->record_idx = i;
	}
}

static size_t emu__log_len(struct emu *emu)
{
	size_t nr;

	unwind_kmodel__events(emu->km, &nr);
	return nr;
}

static int emu__apply_sample(struct emu *emu, struct emu_task *t, size_t i)
{
	struct emu_event *e = &emu->ev[i];
	long idx;
	int err;

	err = emu__migrate(emu, t, e->cpu);
	if (err)
		return err;
	idx = unwind_kmodel__sample(emu->km, t->tid, e->time, i, NULL, 0, false);
	if (idx < 0)
		return emu__model_err(idx, "sample", t->tid);
	e->model_idx = idx;
	e->entry = t->entry;
	emu->entries[t->entry].nr_samples++;
	if (!emu->entries[t->entry].cookie) {
		emu->entries[t->entry].cookie = unwind_kmodel__events(emu->km, NULL)[idx].cookie;
		emu->entries[t->entry].first_cpu = e->cpu;
	}
	t->last_time = e->time;
	return 0;
}

/*
 * The sample before which --late writes the record: the entry's last one,
 * or the one before it when the last is a sys_exit sample (which then comes
 * after the record too).  It must be later than the sample before it.
 */
static long emu__late_candidate(struct emu *emu, struct emu_task *t)
{
	long last = t->held[1], prev = t->held[0], cand;
	u64 before;

	if (last == EMU_NONE)
		return EMU_NONE;
	if (!(emu->ev[last].flags & EMU_F_SYS_EXIT)) {
		cand = last;
		before = prev != EMU_NONE ? emu->ev[prev].time : t->last_time;
	} else if (prev != EMU_NONE && !(emu->ev[prev].flags & EMU_F_SYS_EXIT)) {
		cand = prev;
		before = t->last_time;
	} else {
		return EMU_NONE;
	}
	return emu->ev[cand].time > before ? cand : EMU_NONE;
}

/*
 * The entry's last two samples go to the model when the entry ends, where
 * --late can write the record before them: the unwind runs (task_work) and
 * the samples taken after it keep the entry's cookie.
 */
static int emu__apply_held(struct emu *emu, struct emu_task *t, bool may_be_late)
{
	long late = may_be_late ? emu__late_candidate(emu, t) : EMU_NONE;
	struct emu_event *e;
	size_t before;
	int k, err = 0;

	if (late != EMU_NONE && !emu_rng__chance(&emu->rng_late, emu->opts->late))
		late = EMU_NONE;
	for (k = 0; k < 2 && !err; k++) {
		if (t->held[k] == EMU_NONE)
			continue;
		if (t->held[k] == late) {
			e = &emu->ev[late];
			err = emu__migrate(emu, t, e->cpu);
			if (err)
				return err;
			before = emu__log_len(emu);
			err = unwind_kmodel__task_work(emu->km, t->tid, e->time - 1);
			if (err)
				return emu__model_err(err, "task_work", t->tid);
			emu__note_record(emu, t, before);
		}
		err = emu__apply_sample(emu, t, t->held[k]);
		t->held[k] = EMU_NONE;
	}
	return err;
}

static int emu__apply_exec(struct emu *emu, struct emu_task *t, const u64 *ips, u32 nr)
{
	int err;

	if (!t->exec_pending)
		return 0;
	t->exec_pending = false;
	err = unwind_kmodel__task_exec(emu->km, t->tid, t->exec_time, ips, nr);
	return emu__model_err(err, "exec", t->tid);
}

static u64 emu__clamp_before(u64 time, u64 next)
{
	return next && next != ULLONG_MAX && next - 1 < time ? next - 1 : time;
}

/* The task's entry ends before @next (ULLONG_MAX: end of input). */
static int emu__close(struct emu *emu, struct emu_task *t, u64 next)
{
	struct emu_entry *entry;
	size_t before;
	u64 when;
	u32 cpu;
	int err;

	if (t->state == EMU_T_NONE)
		return 0;
	entry = &emu->entries[t->entry];

	err = emu__apply_held(emu, t, true);
	if (!err)
		err = emu__apply_exec(emu, t, NULL, 0);
	if (err)
		return err;

	if (t->state == EMU_T_RETURNING) {
		when = max(t->ret_time, emu__clamp_before(t->ret_time + 1, next));
		cpu = t->ret_cpu;
		entry->how = t->ret_how;
	} else {
		when = t->ev_time + EMU_FALLBACK_NS;
		if (t->bound != ULLONG_MAX)
			when = emu__clamp_before(when, t->bound);
		when = max(t->ev_time, emu__clamp_before(when, next));
		cpu = t->ev_cpu;
		entry->how = EMU_RET_FALLBACK;
	}
	err = emu__migrate(emu, t, cpu);
	if (err)
		return err;
	before = emu__log_len(emu);
	err = unwind_kmodel__task_return(emu->km, t->tid, when);
	if (err)
		return emu__model_err(err, "return", t->tid);
	emu__note_record(emu, t, before);
	t->state = EMU_T_NONE;
	return 0;
}

static int emu__new_entry(struct emu *emu, struct emu_task *t, size_t i)
{
	struct emu_event *e = &emu->ev[i];
	struct emu_entry *entry;
	const u64 *user;
	u32 nr;
	int err;

	if (!t->in_model || t->dead) {
		err = unwind_kmodel__task_new(emu->km, e->pid, e->tid, e->cpu, 0);
		if (err)
			return emu__model_err(err, "new task", t->tid);
		t->in_model = true;
		t->dead = false;
		t->model_cpu = e->cpu;
		t->pid = e->pid;
	}
	user = emu_event__user(e, &nr);
	err = unwind_kmodel__task_set_user_stack(emu->km, t->tid, user, nr);
	if (!err)
		err = unwind_kmodel__task_enter(emu->km, t->tid, e->time);
	if (err)
		return emu__model_err(err, "enter", t->tid);

	if (deferred_emulate__grow((void **)&emu->entries, &emu->cap_entries, emu->nr_entries,
				   sizeof(*emu->entries)))
		return -ENOMEM;
	entry = &emu->entries[emu->nr_entries];
	memset(entry, 0, sizeof(*entry));
	entry->tid = t->tid;
	entry->record_idx = EMU_NONE;
	entry->record = EMU_NONE;
	t->entry = emu->nr_entries++;

	t->state = EMU_T_OPEN;
	t->chain = user;
	t->nr_chain = nr;
	t->held[0] = t->held[1] = EMU_NONE;
	t->exec_pending = false;
	t->ev_time = e->time;
	t->ev_cpu = e->cpu;
	t->bound = ULLONG_MAX;
	t->frozen = t->slept = false;
	return emu__apply_sample(emu, t, i);
}

static int emu__join(struct emu *emu, struct emu_task *t, size_t i)
{
	struct emu_event *e = &emu->ev[i];
	int err = 0;

	if (t->held[0] != EMU_NONE)
		err = emu__apply_sample(emu, t, t->held[0]);
	if (err)
		return err;
	t->held[0] = t->held[1];
	t->held[1] = i;
	t->ev_time = e->time;
	t->ev_cpu = e->cpu;
	t->bound = ULLONG_MAX;
	t->frozen = t->slept = false;
	return 0;
}

static void emu__returning(struct emu_task *t, const struct emu_event *e, enum emu_return how)
{
	t->state = EMU_T_RETURNING;
	t->ret_time = e->time;
	t->ret_cpu = e->cpu;
	t->ret_how = how;
}

static int emu__do_sample(struct emu *emu, struct emu_task *t, size_t i)
{
	struct emu_event *e = &emu->ev[i];
	const u64 *user;
	u32 nr;
	int err;

	if (!(e->flags & EMU_F_DEFER)) {
		if (t->state == EMU_T_RETURNING)
			return emu__close(emu, t, e->time);
		if (t->state == EMU_T_OPEN && (e->flags & EMU_F_SYS_EXIT))
			emu__returning(t, e, EMU_RET_SYS_EXIT);
		return 0;
	}

	if (e->flags & EMU_F_USER) {
		/* the interrupt is an entry of its own */
		err = emu__close(emu, t, e->time);
		if (!err)
			err = emu__new_entry(emu, t, i);
		if (!err)
			emu__returning(t, e, EMU_RET_USER);
		return err;
	}

	if (t->state == EMU_T_RETURNING) {
		err = emu__close(emu, t, e->time);
		if (err)
			return err;
	}
	user = emu_event__user(e, &nr);
	if (t->state == EMU_T_OPEN && t->exec_pending) {
		/* the new program's stack: same entry */
		err = emu__apply_exec(emu, t, user, nr);
		if (err)
			return err;
		t->chain = user;
		t->nr_chain = nr;
	} else if (t->state == EMU_T_OPEN &&
		   (nr != t->nr_chain || memcmp(user, t->chain, nr * sizeof(u64)))) {
		err = emu__close(emu, t, e->time);
		if (err)
			return err;
	}
	if (t->state == EMU_T_OPEN)
		err = emu__join(emu, t, i);
	else
		err = emu__new_entry(emu, t, i);
	if (!err && (e->flags & EMU_F_SYS_EXIT))
		emu__returning(t, e, EMU_RET_SYS_EXIT);
	return err;
}

static int emu__do_event(struct emu *emu, struct emu_task *t, size_t i)
{
	struct emu_event *e = &emu->ev[i];
	size_t before;
	int err = 0;

	switch (e->kind) {
	case EMU_K_SAMPLE:
		return emu__do_sample(emu, t, i);
	case EMU_K_SWITCH:
		if (t->state == EMU_T_RETURNING)
			return emu__close(emu, t, e->time);
		if (t->state != EMU_T_OPEN || t->frozen)
			return 0;
		if (e->flags & EMU_F_PREEMPT) {
			/* running, maybe in user space already */
			t->bound = e->time;
			t->frozen = true;
		} else if (e->flags & EMU_F_OUT) {
			t->slept = true;
		} else if (t->slept) {
			/* woke up from a sleep in the kernel, maybe elsewhere */
			t->ev_time = e->time;
			t->ev_cpu = e->cpu;
			t->slept = false;
		}
		return 0;
	case EMU_K_EXEC:
		if (t->state == EMU_T_RETURNING)
			return emu__close(emu, t, e->time);
		if (t->state != EMU_T_OPEN)
			return 0;
		err = emu__apply_held(emu, t, false);
		t->exec_pending = true;
		t->exec_time = e->time;
		return err;
	case EMU_K_EXIT:
		if (t->state == EMU_T_RETURNING)
			err = emu__close(emu, t, e->time);
		if (err || !t->in_model || t->dead)
			return err;
		before = emu__log_len(emu);
		if (t->state == EMU_T_OPEN) {
			err = emu__apply_held(emu, t, true);
			if (!err)
				err = emu__apply_exec(emu, t, NULL, 0);
			if (!err)
				err = emu__migrate(emu, t, t->ev_cpu);
			if (err)
				return err;
			emu->entries[t->entry].how = EMU_RET_EXIT;
		}
		err = unwind_kmodel__task_exit(emu->km, t->tid, e->time, emu->opts->exit_records);
		if (err)
			return emu__model_err(err, "exit", t->tid);
		if (t->state == EMU_T_OPEN)
			emu__note_record(emu, t, before);
		t->state = EMU_T_NONE;
		t->dead = true;
		return 0;
	default:
		return 0;
	}
}

static int emu__cmp_time(const void *a, const void *b, void *arg)
{
	const struct emu_event *ev = arg;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	if (ev[x].time != ev[y].time)
		return ev[x].time < ev[y].time ? -1 : 1;
	return x < y ? -1 : x > y;
}

int deferred_emulate__run_model(struct emu *emu)
{
	struct unwind_kmodel_opts kopts = {
		.sz = sizeof(kopts),
		.layout = UNWIND_COOKIE_LAYOUT_MERGED_LE,
		.counter_start = 1,
		.nr_listeners = 1,
		.first_listener_id = EMU_LISTENER_ID,
	};
	struct int_node *node;
	size_t *order, nr = 0, i;
	u32 max_cpu = 0;
	int err = 0;

#if __BYTE_ORDER == __BIG_ENDIAN
	kopts.layout = UNWIND_COOKIE_LAYOUT_MERGED_BE;
#endif
	order = calloc(emu->nr_ev ?: 1, sizeof(*order));
	if (!order)
		return -ENOMEM;
	for (i = 0; i < emu->nr_ev; i++) {
		struct emu_event *e = &emu->ev[i];

		if (!(e->flags & EMU_F_TIMED) || !e->tid || e->tid == (u32)-1)
			continue;
		if (e->kind != EMU_K_SAMPLE && e->kind != EMU_K_SWITCH &&
		    e->kind != EMU_K_EXIT && e->kind != EMU_K_EXEC)
			continue;
		if (e->cpu > max_cpu)
			max_cpu = e->cpu;
		order[nr++] = i;
	}
	qsort_r(order, nr, sizeof(*order), emu__cmp_time, emu->ev);

	kopts.nr_cpus = max(emu->nr_cpus, max_cpu + 1);
	emu->km = unwind_kmodel__new(&kopts);
	emu->tasks = intlist__new(NULL);
	if (!emu->km || !emu->tasks) {
		err = -ENOMEM;
		goto out;
	}

	for (i = 0; i < nr && !err; i++) {
		struct emu_task *t = emu__task(emu, &emu->ev[order[i]]);

		err = t ? emu__do_event(emu, t, order[i]) : -ENOMEM;
	}
	intlist__for_each_entry(node, emu->tasks) {
		if (err)
			break;
		err = emu__close(emu, node->priv, ULLONG_MAX);
	}
out:
	free(order);
	return err;
}
