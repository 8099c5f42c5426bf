// SPDX-License-Identifier: GPL-2.0
/*
 * Emulation of Linux 6.19 deferred user callchains.
 *
 * A frame-pointer recording (perf record -g) made on any kernel is rewritten
 * into the file a 6.19 kernel with attr.defer_callchain would have produced:
 * each sample's user part replaced by PERF_CONTEXT_USER_DEFERRED and a
 * cookie, and one PERF_RECORD_CALLCHAIN_DEFERRED per kernel entry carrying
 * the user stack, written when the task returned to user space, on the CPU
 * it returned on.  libunwind-cookie's kernel model (unwind_kmodel) assigns
 * the cookies and writes the records; this file decides, from what the
 * recording shows, when each task entered and left the kernel.
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
 *
 * File order.  perf record copies the per-CPU buffers pass by pass and
 * separates passes with PERF_RECORD_FINISHED_ROUND.  A record written at time
 * t on CPU c goes into the first round whose events reach t (a pass copies
 * what was written before it ran), into CPU c's stretch of that round, after
 * the events of CPU c not later than t.
 *
 * The whole input is held in memory.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/compiler.h>
#include <linux/err.h>
#include <linux/kernel.h>
#include <linux/string.h>
#include <linux/zalloc.h>
#include <perf/event.h>
#include <internal/lib.h>
#include <unwind-cookie/callchain.h>
#include <unwind-cookie/cookie.h>
#include <unwind-cookie/kmodel.h>

#include "cap.h"
#include "data.h"
#include "debug.h"
#include "event.h"
#include "evlist.h"
#include "evsel.h"
#include "header.h"
#include "intlist.h"
#include "parse-events.h"
#include "perf_api_probe.h"
#include "record.h"
#include "session.h"
#include "synthetic-events.h"
#include "tool.h"
#include "tracepoint.h"
#include "util.h"
#include "deferred-emulate.h"

/* Fallback: a kernel entry ends this long after its last evidence. */
#define EMU_FALLBACK_NS		1000ULL

/* Listener id handed to the kernel model; records carry the tracking event's id. */
#define EMU_LISTENER_ID		1

#define EMU_NONE		(-1)

enum emu_kind {
	EMU_K_OTHER,
	EMU_K_SAMPLE,
	EMU_K_SWITCH,
	EMU_K_EXIT,
	EMU_K_EXEC,
	EMU_K_ROUND,		/* PERF_RECORD_FINISHED_ROUND */
	EMU_K_ATTR,		/* PERF_RECORD_HEADER_ATTR (pipe mode) */
};

enum emu_flags {
	EMU_F_TIMED	= 1 << 0,	/* time and CPU are known */
	EMU_F_DEFER	= 1 << 1,	/* a sample whose user part is deferred */
	EMU_F_USER	= 1 << 2,	/* ... taken in user mode */
	EMU_F_SYS_EXIT	= 1 << 3,	/* a raw_syscalls:sys_exit sample */
	EMU_F_OUT	= 1 << 4,	/* a switch out */
	EMU_F_PREEMPT	= 1 << 5,	/* ... of a running (preempted) task */
};

/* One record of the input, in file order. */
struct emu_event {
	union perf_event	*event;		/* a copy */
	struct evsel		*evsel;		/* samples and attrs */
	u64			time;
	u64			id;		/* sample id, or -1 */
	u32			pid;
	u32			tid;
	u32			cpu;		/* derived: see emu__prepare_events() */
	u32			raw_cpu;	/* as parsed, or -1 */
	u32			round;
	u16			kind;
	u16			flags;
	/* Samples with a user part: where the callchain is. */
	u32			chain_off;	/* byte offset of ip_callchain::nr */
	u32			chain_nr;
	u32			user_at;	/* index of PERF_CONTEXT_USER */
	int			entry;		/* kernel entry, or EMU_NONE */
	long			model_idx;	/* sample in the model's log, or EMU_NONE */
};

enum emu_return {
	EMU_RET_NONE,
	EMU_RET_USER,		/* a user-mode sample: the interrupt returned */
	EMU_RET_SYS_EXIT,
	EMU_RET_FALLBACK,
	EMU_RET_EXIT,
};

/* One kernel entry, i.e. one cookie. */
struct emu_entry {
	u32		tid;
	u64		cookie;
	long		record_idx;	/* its record in the model's log, or EMU_NONE */
	int		record;		/* in emu::records, or EMU_NONE */
	u32		first_cpu;
	u32		nr_samples;
	bool		late;		/* its last sample was taken after the record */
	enum emu_return	how;
};

/* A PERF_RECORD_CALLCHAIN_DEFERRED to write. */
struct emu_record {
	long		log_idx;
	int		entry;
	u64		time;
	u32		cpu;
	u32		copies;		/* 0: dropped, 2: duplicated */
	long		bogus_at;	/* index of the inserted ip, or EMU_NONE */
	u64		bogus_ip;
	size_t		pos;		/* written before the input event with this index */
};

enum emu_task_state {
	EMU_T_NONE,		/* in user space, as far as we know */
	EMU_T_OPEN,		/* in a kernel entry */
	EMU_T_RETURNING,	/* a return point was seen: the record comes before the next event */
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

/* splitmix64: one independent stream per kind of fault. */
struct emu_rng {
	u64	state;
};

struct emu {
	struct perf_tool		tool;
	const struct deferred_emulate_opts *opts;
	struct deferred_emulate_stats	*stats;
	struct perf_session		*session;
	bool				pipe;

	struct emu_event		*ev;
	size_t				nr_ev;
	size_t				cap_ev;
	u32				round;
	u64				nr_samples;

	struct evsel			*tracking;
	struct evsel			*sys_exit;
	u32				nr_cpus;
	u32				nr_online;
	u64				*track_id;	/* per CPU: the tracking event's id */

	struct unwind_kmodel		*km;
	struct intlist			*tasks;
	struct emu_entry		*entries;
	size_t				nr_entries;
	size_t				cap_entries;
	struct emu_record		*records;
	size_t				nr_records;

	struct emu_rng			rng_drop;
	struct emu_rng			rng_dup;
	struct emu_rng			rng_late;
	struct emu_rng			rng_bogus;

	struct perf_file_section	secs[HEADER_FEAT_BITS];
	int				err;
};

static u64 emu_rng__next(struct emu_rng *rng)
{
	u64 z = (rng->state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* true with probability @fraction; always draws, so streams stay aligned */
static bool emu_rng__chance(struct emu_rng *rng, double fraction)
{
	double u = (emu_rng__next(rng) >> 11) * (1.0 / 9007199254740992.0);

	return u < fraction;
}

static void emu_rng__init(struct emu_rng *rng, u64 seed, u64 stream)
{
	rng->state = seed ^ (stream * 0xd1b54a32d192ed03ULL);
	emu_rng__next(rng);
}

static const u64 *emu_event__user(const struct emu_event *e, u32 *nr)
{
	const u64 *ips = (const u64 *)((const char *)e->event + e->chain_off) + 1;

	*nr = e->chain_nr - e->user_at - 1;
	return ips + e->user_at + 1;
}

/* ---- which events defer ---- */

/*
 * As perf record --call-graph deferred does (patch 0006): every event
 * sampling callchains with a user part, dummies excepted.
 */
static bool evsel__emu_defers(struct evsel *evsel)
{
	struct perf_event_attr *attr = &evsel->core.attr;

	return (attr->sample_type & PERF_SAMPLE_CALLCHAIN) &&
	       !attr->exclude_callchain_user && !evsel__is_dummy_event(evsel);
}

static void emu__find_events(struct emu *emu, struct evlist *evlist)
{
	struct evsel *evsel;

	emu->tracking = NULL;
	emu->sys_exit = NULL;
	evlist__for_each_entry(evlist, evsel) {
		struct perf_event_attr *attr = &evsel->core.attr;

		if (!emu->tracking && (attr->mmap || attr->mmap2 || attr->comm || attr->task))
			emu->tracking = evsel;
		if (!emu->sys_exit && attr->type == PERF_TYPE_TRACEPOINT &&
		    !strncmp(evsel__name(evsel), DEFERRED_EMULATE_RETURN_EVENT,
			     strlen(DEFERRED_EMULATE_RETURN_EVENT)))
			emu->sys_exit = evsel;
	}
	if (!emu->tracking && !evlist__empty(evlist))
		emu->tracking = evlist__first(evlist);
}

static void emu__set_attr_bits(struct emu *emu, struct evsel *evsel,
			       struct perf_event_attr *attr)
{
	if (evsel__emu_defers(evsel))
		attr->defer_callchain = 1;
	if (evsel == emu->tracking)
		attr->defer_output = 1;
}

/* ---- reading the input ---- */

static int emu__grow(void **array, size_t *cap, size_t nr, size_t size)
{
	size_t new_cap;
	void *p;

	if (nr < *cap)
		return 0;
	new_cap = *cap ? *cap * 2 : 4096;
	p = realloc(*array, new_cap * size);
	if (!p)
		return -ENOMEM;
	*array = p;
	*cap = new_cap;
	return 0;
}

static struct emu_event *emu__add(struct emu *emu, union perf_event *event, u16 kind)
{
	struct emu_event *e;

	if (emu->err)
		return NULL;
	if (emu__grow((void **)&emu->ev, &emu->cap_ev, emu->nr_ev, sizeof(*emu->ev))) {
		emu->err = -ENOMEM;
		return NULL;
	}
	e = &emu->ev[emu->nr_ev];
	memset(e, 0, sizeof(*e));
	e->event = memdup(event, event->header.size);
	if (!e->event) {
		emu->err = -ENOMEM;
		return NULL;
	}
	e->kind = kind;
	e->round = emu->round;
	e->pid = e->tid = (u32)-1;
	e->raw_cpu = (u32)-1;
	e->id = -1ULL;
	e->entry = EMU_NONE;
	e->model_idx = EMU_NONE;
	emu->nr_ev++;
	return e;
}

static void emu_event__set_time(struct emu_event *e, struct perf_sample *sample)
{
	if (!sample)
		return;
	e->id = sample->id;
	e->raw_cpu = sample->cpu;
	if (sample->time == -1ULL || !sample->time)
		return;
	e->time = sample->time;
	e->flags |= EMU_F_TIMED;
	e->pid = sample->pid;
	e->tid = sample->tid;
}

static int emu__keep(struct perf_tool *tool, union perf_event *event,
		     struct perf_sample *sample, struct machine *machine __maybe_unused)
{
	struct emu *emu = container_of(tool, struct emu, tool);
	struct emu_event *e;
	u16 kind = EMU_K_OTHER;

	switch (event->header.type) {
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		kind = EMU_K_SWITCH;
		break;
	case PERF_RECORD_EXIT:
		kind = EMU_K_EXIT;
		break;
	case PERF_RECORD_COMM:
		if (event->header.misc & PERF_RECORD_MISC_COMM_EXEC)
			kind = EMU_K_EXEC;
		break;
	default:
		break;
	}

	e = emu__add(emu, event, kind);
	if (!e)
		return emu->err;
	emu_event__set_time(e, sample);

	switch (kind) {
	case EMU_K_SWITCH:
		if (event->header.misc & PERF_RECORD_MISC_SWITCH_OUT)
			e->flags |= EMU_F_OUT;
		if (event->header.misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT)
			e->flags |= EMU_F_PREEMPT;
		break;
	case EMU_K_EXIT:
		e->pid = event->fork.pid;
		e->tid = event->fork.tid;
		break;
	case EMU_K_EXEC:
		e->pid = event->comm.pid;
		e->tid = event->comm.tid;
		break;
	default:
		break;
	}
	return 0;
}

/*
 * Where the user part of @chain starts (its PERF_CONTEXT_USER), or -1 when
 * it has none, or the context markers before it are a guest's.  Only the
 * markers before it count: a user part may hold any value, marker-range
 * junk included.
 */
static long emu__user_at(const struct ip_callchain *chain)
{
	u64 i;

	for (i = 0; i < chain->nr; i++) {
		if (chain->ips[i] == PERF_CONTEXT_USER)
			return i;
		if (chain->ips[i] >= PERF_CONTEXT_GUEST_USER && chain->ips[i] <= PERF_CONTEXT_GUEST)
			return -1;
	}
	return -1;
}

/* A chain as 6.19 writes it with defer_callchain: ..., USER_DEFERRED, cookie */
static bool emu__deferred_chain(const struct ip_callchain *chain)
{
	return chain->nr >= 2 && chain->ips[chain->nr - 2] == PERF_CONTEXT_USER_DEFERRED &&
	       emu__user_at(chain) < 0;
}

static int emu__sample(struct perf_tool *tool, union perf_event *event,
		       struct perf_sample *sample, struct evsel *evsel,
		       struct machine *machine __maybe_unused)
{
	struct emu *emu = container_of(tool, struct emu, tool);
	struct ip_callchain *chain = sample->callchain;
	struct emu_event *e = emu__add(emu, event, EMU_K_SAMPLE);
	long at;

	if (!e)
		return emu->err;
	e->evsel = evsel;
	emu->nr_samples++;
	emu_event__set_time(e, sample);

	if (!(evsel->core.attr.sample_type & PERF_SAMPLE_CALLCHAIN) || !chain)
		return 0;

	if (emu__deferred_chain(chain)) {
		pr_err("sample at %" PRIu64 " already has a deferred user callchain\n",
		       sample->time);
		emu->err = -EINVAL;
		return emu->err;
	}
	if (!evsel__emu_defers(evsel) || !(e->flags & EMU_F_TIMED) ||
	    !sample->tid || sample->tid == (u32)-1)
		return 0;
	if (sample->cpumode != PERF_RECORD_MISC_KERNEL && sample->cpumode != PERF_RECORD_MISC_USER)
		return 0;
	/* no user part (a kernel thread, an exiting task), or a guest's */
	at = emu__user_at(chain);
	if (at < 0)
		return 0;

	e->chain_off = (const char *)chain - (const char *)event;
	e->chain_nr = chain->nr;
	e->user_at = at;
	e->flags |= EMU_F_DEFER;
	if (sample->cpumode == PERF_RECORD_MISC_USER)
		e->flags |= EMU_F_USER;
	return 0;
}

static int emu__read(struct perf_tool *tool, union perf_event *event,
		     struct perf_sample *sample, struct evsel *evsel __maybe_unused,
		     struct machine *machine)
{
	return emu__keep(tool, event, sample, machine);
}

static int emu__round(struct perf_tool *tool, union perf_event *event,
		      struct ordered_events *oe __maybe_unused)
{
	struct emu *emu = container_of(tool, struct emu, tool);

	if (!emu__add(emu, event, EMU_K_ROUND))
		return emu->err;
	emu->round++;
	return 0;
}

static int emu__keep_op2(struct perf_session *session, union perf_event *event)
{
	struct emu *emu = container_of(session->tool, struct emu, tool);

	return emu__add(emu, event, EMU_K_OTHER) ? 0 : emu->err;
}

static int emu__keep_feature(struct perf_session *session, union perf_event *event)
{
	int err = perf_event__process_feature(session, event);

	return err ?: emu__keep_op2(session, event);
}

static int emu__keep_id_index(struct perf_session *session, union perf_event *event)
{
	int err = perf_event__process_id_index(session, event);

	return err ?: emu__keep_op2(session, event);
}

static int emu__attr(struct perf_tool *tool, union perf_event *event, struct evlist **pevlist)
{
	struct emu *emu = container_of(tool, struct emu, tool);
	struct emu_event *e;
	int err;

	if (event->attr.attr.defer_callchain || event->attr.attr.defer_output) {
		pr_err("the input already asks for deferred user callchains\n");
		return -EINVAL;
	}
	err = perf_event__process_attr(tool, event, pevlist);
	if (err)
		return err;
	e = emu__add(emu, event, EMU_K_ATTR);
	if (!e)
		return emu->err;
	e->evsel = evlist__last(*pevlist);
	return 0;
}

static int emu__event_update(struct perf_tool *tool, union perf_event *event,
			     struct evlist **pevlist)
{
	struct emu *emu = container_of(tool, struct emu, tool);
	int err = perf_event__process_event_update(tool, event, pevlist);

	if (err)
		return err;
	return emu__add(emu, event, EMU_K_OTHER) ? 0 : emu->err;
}

static int emu__refuse_deferred(struct perf_tool *tool __maybe_unused,
				union perf_event *event __maybe_unused,
				struct perf_sample *sample __maybe_unused,
				struct machine *machine __maybe_unused)
{
	pr_err("the input already has PERF_RECORD_CALLCHAIN_DEFERRED records\n");
	return -EINVAL;
}

static int emu__refuse_tracing_data(struct perf_session *session __maybe_unused,
				    union perf_event *event __maybe_unused)
{
	pr_err("tracepoint data in a pipe is not supported: record to a file\n");
	return -EINVAL;
}

static s64 emu__refuse_auxtrace(struct perf_session *session __maybe_unused,
				union perf_event *event __maybe_unused)
{
	pr_err("AUX area tracing data is not supported\n");
	return -EINVAL;
}

static int emu__refuse_auxtrace_info(struct perf_session *session,
				     union perf_event *event)
{
	return emu__refuse_auxtrace(session, event);
}

static void emu__init_tool(struct perf_tool *tool)
{
	memset(tool, 0, sizeof(*tool));
	tool->sample		= emu__sample;
	tool->read		= emu__read;
	tool->mmap		= emu__keep;
	tool->mmap2		= emu__keep;
	tool->comm		= emu__keep;
	tool->namespaces	= emu__keep;
	tool->cgroup		= emu__keep;
	tool->fork		= emu__keep;
	tool->exit		= emu__keep;
	tool->lost		= emu__keep;
	tool->lost_samples	= emu__keep;
	tool->aux		= emu__keep;
	tool->itrace_start	= emu__keep;
	tool->aux_output_hw_id	= emu__keep;
	tool->context_switch	= emu__keep;
	tool->throttle		= emu__keep;
	tool->unthrottle	= emu__keep;
	tool->ksymbol		= emu__keep;
	tool->bpf		= emu__keep;
	tool->text_poke		= emu__keep;
	tool->callchain_deferred = emu__refuse_deferred;
	tool->attr		= emu__attr;
	tool->event_update	= emu__event_update;
	tool->tracing_data	= emu__refuse_tracing_data;
	tool->finished_round	= emu__round;
	tool->build_id		= emu__keep_op2;
	tool->id_index		= emu__keep_id_index;
	tool->auxtrace_info	= emu__refuse_auxtrace_info;
	tool->auxtrace_error	= emu__keep_op2;
	tool->time_conv		= emu__keep_op2;
	tool->thread_map	= emu__keep_op2;
	tool->cpu_map		= emu__keep_op2;
	tool->stat_config	= emu__keep_op2;
	tool->stat		= emu__keep_op2;
	tool->stat_round	= emu__keep_op2;
	tool->feature		= emu__keep_feature;
	tool->finished_init	= emu__keep_op2;
	tool->auxtrace		= emu__refuse_auxtrace;
	/* compressed: the default decompresses and hands us the records */
	tool->ordered_events	= false;
	tool->dont_split_sample_group = true;
}

/* ---- checks before reading the data ---- */

static int emu__check_evlist(struct emu *emu, struct evlist *evlist)
{
	struct evsel *evsel;
	bool defers = false;

	evlist__for_each_entry(evlist, evsel) {
		struct perf_event_attr *attr = &evsel->core.attr;

		if (attr->defer_callchain || attr->defer_output) {
			pr_err("the input already asks for deferred user callchains\n");
			return -EINVAL;
		}
		if (!evsel__emu_defers(evsel))
			continue;
		if (!(attr->sample_type & PERF_SAMPLE_TIME) || !(attr->sample_type & PERF_SAMPLE_TID)) {
			pr_err("%s: samples need a time and a tid\n", evsel__name(evsel));
			return -EINVAL;
		}
		defers = true;
	}
	if (!defers) {
		pr_err("no event samples user callchains: record with -g or --call-graph fp\n");
		return -EINVAL;
	}
	if (emu->tracking && !emu->tracking->core.attr.sample_id_all) {
		pr_err("%s: needs sample_id_all\n", evsel__name(emu->tracking));
		return -EINVAL;
	}
	return 0;
}

/*
 * Once the whole input is read (in pipe mode the attrs came with it): the
 * tracking and sys_exit events, each event's CPU, the tracking event's id
 * per CPU.  Where the samples do not carry their CPU, an id per CPU (perf
 * record's per-CPU events) still tells it.
 */
static int emu__prepare_events(struct emu *emu)
{
	struct evlist *evlist = emu->session->evlist;
	struct perf_env *env = &emu->session->header.env;
	struct evsel *evsel;
	bool cpu = true, ids = true;
	size_t i;
	u32 k;
	int err;

	emu__find_events(emu, evlist);
	err = emu__check_evlist(emu, evlist);
	if (err)
		return err;

	emu->nr_online = env->nr_cpus_online > 0 ? env->nr_cpus_online : 1;
	emu->nr_cpus = max(emu->nr_online, env->nr_cpus_avail > 0 ? (u32)env->nr_cpus_avail : 1);
	evlist__for_each_entry(evlist, evsel) {
		u64 type = evsel->core.attr.sample_type;

		if (!evsel__emu_defers(evsel) && evsel != emu->tracking)
			continue;
		if (!(type & PERF_SAMPLE_CPU))
			cpu = false;
		if (!(type & (PERF_SAMPLE_ID | PERF_SAMPLE_IDENTIFIER)) ||
		    evsel->core.ids != emu->nr_online)
			ids = false;
	}
	emu->stats->have_cpu = cpu || ids;

	for (i = 0; i < emu->nr_ev; i++) {
		struct emu_event *e = &emu->ev[i];

		if (e->raw_cpu != (u32)-1) {
			e->cpu = e->raw_cpu;
		} else if (!cpu && ids && e->id != -1ULL) {
			evsel = e->evsel ?: evlist__id2evsel(evlist, e->id);
			for (k = 0; evsel && k < evsel->core.ids; k++)
				if (evsel->core.id[k] == e->id)
					e->cpu = k;
		}
		if (e->cpu >= emu->nr_cpus)
			emu->nr_cpus = e->cpu + 1;
	}

	emu->track_id = calloc(emu->nr_cpus, sizeof(u64));
	if (!emu->track_id)
		return -ENOMEM;
	for (i = 0; i < emu->nr_ev; i++) {
		struct emu_event *e = &emu->ev[i];

		if (!(e->flags & EMU_F_TIMED))
			continue;
		if (e->kind == EMU_K_SWITCH)
			emu->stats->have_switch = true;
		if (e->kind == EMU_K_SAMPLE && e->evsel == emu->sys_exit) {
			e->flags |= EMU_F_SYS_EXIT;
			emu->stats->have_sys_exit = true;
		}
		if (e->id == -1ULL || e->raw_cpu == (u32)-1)
			continue;
		evsel = e->evsel ?: evlist__id2evsel(evlist, e->id);
		if (evsel == emu->tracking)
			emu->track_id[e->cpu] = e->id;
	}
	return 0;
}

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
			emu->entries[t->entry].late = true;
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

	if (emu__grow((void **)&emu->entries, &emu->cap_entries, emu->nr_entries,
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

static int emu__run_model(struct emu *emu)
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

/* ---- the records ---- */

/* The first round whose events reach @time: perf record had copied it by then. */
static u32 emu__record_round(const u64 *round_max, u32 nr_rounds, u64 time)
{
	u32 lo = 0, hi = nr_rounds;

	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;

		if (round_max[mid] >= time)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo < nr_rounds ? lo : nr_rounds - 1;
}

static int emu__cmp_record(const void *a, const void *b)
{
	const struct emu_record *x = a, *y = b;

	if (x->pos != y->pos)
		return x->pos < y->pos ? -1 : 1;
	if (x->cpu != y->cpu)
		return x->cpu < y->cpu ? -1 : 1;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->log_idx < y->log_idx ? -1 : x->log_idx > y->log_idx;
}

/* The timed events, by round, CPU and time: where records go. */
struct emu_key {
	u32	round;
	u32	cpu;
	u64	time;
	size_t	idx;
};

static int emu__cmp_key(const void *a, const void *b)
{
	const struct emu_key *x = a, *y = b;

	if (x->round != y->round)
		return x->round < y->round ? -1 : 1;
	if (x->cpu != y->cpu)
		return x->cpu < y->cpu ? -1 : 1;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* The first key after (@round, @cpu, @time). */
static size_t emu__key_after(const struct emu_key *keys, size_t nr, u32 round, u32 cpu, u64 time)
{
	size_t lo = 0, hi = nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct emu_key *k = &keys[mid];

		if (k->round < round || (k->round == round && (k->cpu < cpu ||
		    (k->cpu == cpu && k->time <= time))))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Where @r goes in round @round, whose events are [@begin, @end): after
 * the last event of its CPU not later than it, else before that CPU's
 * first event, else after the CPUs below it (the buffers are copied in CPU
 * order), else before those above, else before the round's end.
 */
static size_t emu__record_pos(const struct emu *emu, const struct emu_key *keys, size_t nr,
			      const struct emu_record *r, u32 round, size_t begin, size_t end)
{
	size_t at = emu__key_after(keys, nr, round, r->cpu, r->time);
	const struct emu_key *prev = at > 0 ? &keys[at - 1] : NULL;
	const struct emu_key *next = at < nr ? &keys[at] : NULL;

	if (prev && prev->round == round && prev->cpu == r->cpu)
		return prev->idx + 1;
	if (next && next->round == round && next->cpu == r->cpu)
		return next->idx;
	/* no event of this CPU in the round */
	if (prev && prev->round == round)
		return prev->idx + 1;
	if (next && next->round == round)
		return next->idx;
	if (end > begin && emu->ev[end - 1].kind == EMU_K_ROUND)
		return end - 1;
	return end;
}

static int emu__place_records(struct emu *emu)
{
	const struct unwind_kmodel_event *log;
	size_t nr_log, i, nr_keys = 0, *round_begin = NULL, *by_log = NULL;
	struct emu_key *keys = NULL;
	u32 nr_rounds = emu->round + 1, r;
	u64 *round_max = NULL, max_time = 0;
	int err = -ENOMEM;

	log = unwind_kmodel__events(emu->km, &nr_log);
	for (i = 0; i < nr_log; i++)
		if (log[i].type == UNWIND_KMODEL_RECORD)
			emu->nr_records++;
	emu->records = calloc(emu->nr_records ?: 1, sizeof(*emu->records));
	round_max = calloc(nr_rounds, sizeof(*round_max));
	round_begin = calloc(nr_rounds + 1, sizeof(*round_begin));
	if (!emu->records || !round_max || !round_begin)
		goto out;

	/* rounds: their extent, and the latest time reached so far */
	for (i = 0, r = 0; i < emu->nr_ev; i++) {
		const struct emu_event *e = &emu->ev[i];

		while (r < e->round)
			round_begin[++r] = i;
		if ((e->flags & EMU_F_TIMED) && e->time > max_time)
			max_time = e->time;
		round_max[e->round] = max_time;
	}
	while (r < nr_rounds)
		round_begin[++r] = emu->nr_ev;
	for (r = 1; r < nr_rounds; r++)
		round_max[r] = max(round_max[r], round_max[r - 1]);

	keys = calloc(emu->nr_ev ?: 1, sizeof(*keys));
	if (!keys)
		goto out;
	for (i = 0; i < emu->nr_ev; i++) {
		const struct emu_event *e = &emu->ev[i];

		if (!(e->flags & EMU_F_TIMED))
			continue;
		keys[nr_keys].round = e->round;
		keys[nr_keys].cpu = e->cpu;
		keys[nr_keys].time = e->time;
		keys[nr_keys++].idx = i;
	}
	qsort(keys, nr_keys, sizeof(*keys), emu__cmp_key);

	for (i = 0, emu->nr_records = 0; i < nr_log; i++) {
		struct emu_record *rec;
		u32 round;

		if (log[i].type != UNWIND_KMODEL_RECORD)
			continue;
		rec = &emu->records[emu->nr_records++];
		rec->log_idx = i;
		rec->entry = EMU_NONE;
		rec->time = log[i].time;
		rec->cpu = log[i].cpu;
		rec->copies = 1;
		rec->bogus_at = EMU_NONE;

		/* every draw is made, so each stream depends on its fraction only */
		if (emu_rng__chance(&emu->rng_drop, emu->opts->drop))
			rec->copies = 0;
		if (emu_rng__chance(&emu->rng_dup, emu->opts->duplicate) && rec->copies)
			rec->copies = 2;
		if (emu_rng__chance(&emu->rng_bogus, emu->opts->bogus_ip) && rec->copies)
			rec->bogus_at = 0;
		if (rec->bogus_at != EMU_NONE) {
			rec->bogus_at = emu_rng__next(&emu->rng_bogus) % (log[i].nr + 1);
			rec->bogus_ip = PERF_CONTEXT_MAX + emu_rng__next(&emu->rng_bogus) % 4095;
		} else {
			emu_rng__next(&emu->rng_bogus);
			emu_rng__next(&emu->rng_bogus);
		}

		round = emu__record_round(round_max, nr_rounds, rec->time);
		rec->pos = emu__record_pos(emu, keys, nr_keys, rec, round, round_begin[round],
					   round_begin[round + 1]);
	}

	/* the entries' records: log index -> record */
	by_log = malloc((nr_log ?: 1) * sizeof(*by_log));
	if (!by_log)
		goto out;
	for (i = 0; i < emu->nr_records; i++)
		by_log[emu->records[i].log_idx] = i;
	for (i = 0; i < emu->nr_entries; i++) {
		struct emu_entry *entry = &emu->entries[i];

		if (entry->record_idx == EMU_NONE)
			continue;
		entry->record = by_log[entry->record_idx];
		emu->records[entry->record].entry = i;
	}
	err = 0;
out:
	free(keys);
	free(by_log);
	free(round_max);
	free(round_begin);
	return err;
}

/* ---- writing ---- */

struct emu_out {
	int	fd;
	u64	written;
	size_t	len;
	char	buf[65536];
};

static int emu_out__flush(struct emu_out *out)
{
	if (out->len && writen(out->fd, out->buf, out->len) != (ssize_t)out->len)
		return -errno ?: -EIO;
	out->len = 0;
	return 0;
}

static int emu_out__write(struct emu_out *out, const void *buf, size_t sz)
{
	int err;

	out->written += sz;
	if (out->len + sz > sizeof(out->buf)) {
		err = emu_out__flush(out);
		if (err)
			return err;
		if (sz > sizeof(out->buf))
			return writen(out->fd, buf, sz) == (ssize_t)sz ? 0 : (-errno ?: -EIO);
	}
	memcpy(out->buf + out->len, buf, sz);
	out->len += sz;
	return 0;
}

/* The tracking event's id on @cpu, for a record's sample_id. */
static u64 emu__track_id(struct emu *emu, u32 cpu)
{
	struct evsel *evsel = emu->tracking;

	if (cpu < emu->nr_cpus && emu->track_id[cpu])
		return emu->track_id[cpu];
	if (cpu < evsel->core.ids && evsel->core.ids == emu->nr_online)
		return evsel->core.id[cpu];
	return evsel->core.ids ? evsel->core.id[0] : 0;
}

static int emu__write_record(struct emu *emu, struct emu_out *out, const struct emu_record *rec)
{
	const struct unwind_kmodel_event *log = &unwind_kmodel__events(emu->km, NULL)[rec->log_idx];
	u64 nr = log->nr + (rec->bogus_at != EMU_NONE), i, k;
	struct perf_sample sample = {
		.pid	= log->pid,
		.tid	= log->tid,
		.time	= rec->time,
		.cpu	= rec->cpu,
	};
	struct perf_record_callchain_deferred *cd;
	size_t size, id_size;
	__u64 *array;
	u32 copy;
	int err = 0;

	sample.id = sample.stream_id = emu__track_id(emu, rec->cpu);
	size = sizeof(*cd) + nr * sizeof(u64) + 8 * sizeof(u64);
	if (size > USHRT_MAX) {
		pr_err("deferred callchain of %" PRIu64 " entries too long\n", nr);
		return -E2BIG;
	}
	cd = zalloc(size);
	if (!cd)
		return -ENOMEM;
	cd->header.type = PERF_RECORD_CALLCHAIN_DEFERRED;
	cd->header.misc = PERF_RECORD_MISC_USER;
	cd->cookie = log->cookie;
	cd->nr = nr;
	for (i = 0, k = 0; i < nr; i++) {
		if (rec->bogus_at != EMU_NONE && i == (u64)rec->bogus_at)
			cd->ips[i] = rec->bogus_ip;
		else
			cd->ips[i] = log->ips[k++];
	}
	array = &cd->ips[nr];
	id_size = perf_event__synthesize_id_sample(array, emu->tracking->core.attr.sample_type,
						   &sample);
	cd->header.size = sizeof(*cd) + nr * sizeof(u64) + id_size;
	for (copy = 0; copy < rec->copies && !err; copy++)
		err = emu_out__write(out, cd, cd->header.size);
	free(cd);
	return err;
}

/* A sample with its user part replaced by PERF_CONTEXT_USER_DEFERRED, cookie. */
static int emu__write_sample(struct emu *emu, struct emu_out *out, const struct emu_event *e)
{
	const struct unwind_kmodel_event *log;
	union perf_event *ev = e->event;
	size_t tail_off, tail_len;
	u64 nr, cookie;
	int err;

	if (e->model_idx == EMU_NONE)
		return emu_out__write(out, ev, ev->header.size);
	log = &unwind_kmodel__events(emu->km, NULL)[e->model_idx];
	cookie = log->cookie;
	if (!cookie)	/* the model refused to defer it */
		return emu_out__write(out, ev, ev->header.size);

	nr = e->user_at + 2;
	tail_off = e->chain_off + (1 + e->chain_nr) * sizeof(u64);
	tail_len = ev->header.size - tail_off;
	{
		struct perf_event_header hdr = ev->header;
		const u64 *ips = (const u64 *)((const char *)ev + e->chain_off) + 1;
		u64 marker[2] = { PERF_CONTEXT_USER_DEFERRED, cookie };

		hdr.size = ev->header.size - (e->chain_nr - nr) * sizeof(u64);
		err = emu_out__write(out, &hdr, sizeof(hdr));
		if (!err)
			err = emu_out__write(out, (const char *)ev + sizeof(hdr),
					     e->chain_off - sizeof(hdr));
		if (!err)
			err = emu_out__write(out, &nr, sizeof(nr));
		if (!err)
			err = emu_out__write(out, ips, e->user_at * sizeof(u64));
		if (!err)
			err = emu_out__write(out, marker, sizeof(marker));
		if (!err)
			err = emu_out__write(out, (const char *)ev + tail_off, tail_len);
	}
	return err;
}

static int emu__write_attr_event(struct emu *emu, struct emu_out *out, const struct emu_event *e)
{
	union perf_event *ev = e->event;
	struct perf_event_attr attr;
	size_t sz = min_t(size_t, ev->attr.attr.size ?: PERF_ATTR_SIZE_VER0, sizeof(attr));

	memset(&attr, 0, sizeof(attr));
	memcpy(&attr, &ev->attr.attr, sz);
	emu__set_attr_bits(emu, e->evsel, &attr);
	memcpy(&ev->attr.attr, &attr, sz);
	return emu_out__write(out, ev, ev->header.size);
}

static int emu__write_data(struct emu *emu, struct emu_out *out)
{
	size_t i, k = 0;
	int err = 0;

	qsort(emu->records, emu->nr_records, sizeof(*emu->records), emu__cmp_record);
	/* the entries point at records by index: redo it after sorting */
	for (i = 0; i < emu->nr_records; i++)
		if (emu->records[i].entry != EMU_NONE)
			emu->entries[emu->records[i].entry].record = i;

	for (i = 0; i <= emu->nr_ev && !err; i++) {
		for (; k < emu->nr_records && emu->records[k].pos == i && !err; k++)
			err = emu__write_record(emu, out, &emu->records[k]);
		if (err || i == emu->nr_ev)
			break;
		switch (emu->ev[i].kind) {
		case EMU_K_SAMPLE:
			err = emu__write_sample(emu, out, &emu->ev[i]);
			break;
		case EMU_K_ATTR:
			err = emu__write_attr_event(emu, out, &emu->ev[i]);
			break;
		default:
			err = emu_out__write(out, emu->ev[i].event, emu->ev[i].event->header.size);
			break;
		}
	}
	return err ?: emu_out__flush(out);
}

/* ---- header features: copied from the input, event descriptions patched ---- */

static int emu__save_section(struct perf_file_section *section,
			     struct perf_header *ph __maybe_unused,
			     int feat, int fd __maybe_unused, void *data)
{
	struct emu *emu = data;

	emu->secs[feat] = *section;
	return 0;
}

/*
 * HEADER_EVENT_DESC: u32 nr, u32 attr size, then per event: the attr, u32
 * nr_ids, the name (u32 len + len bytes), u64 ids[nr_ids].
 */
static int emu__patch_event_desc(struct emu *emu, void *buf, size_t size)
{
	struct evlist *evlist = emu->session->evlist;
	char *p = buf, *end = p + size;
	u32 nre, sz, i;

	if (size < 8)
		return -EINVAL;
	memcpy(&nre, p, 4);
	memcpy(&sz, p + 4, 4);
	p += 8;
	if (sz < PERF_ATTR_SIZE_VER0)
		return -EINVAL;
	for (i = 0; i < nre; i++) {
		struct perf_event_attr attr;
		struct evsel *evsel = NULL;
		char *attr_p = p;
		u32 nr_ids, len;
		u64 id;

		if ((size_t)(end - p) < sz + 8)
			return -EINVAL;
		p += sz;
		memcpy(&nr_ids, p, 4);
		memcpy(&len, p + 4, 4);
		p += 8;
		if ((size_t)(end - p) < len || (u64)(end - p - len) < (u64)nr_ids * 8)
			return -EINVAL;
		p += len;
		if (nr_ids) {
			memcpy(&id, p, 8);
			evsel = evlist__id2evsel(evlist, id);
		} else {
			evsel = evlist__find_evsel(evlist, i);
		}
		p += (size_t)nr_ids * 8;
		if (!evsel)
			continue;
		memset(&attr, 0, sizeof(attr));
		memcpy(&attr, attr_p, min_t(size_t, sz, sizeof(attr)));
		emu__set_attr_bits(emu, evsel, &attr);
		memcpy(attr_p, &attr, min_t(size_t, sz, sizeof(attr)));
	}
	return 0;
}

struct emu_fc {
	struct feat_copier	fc;
	struct emu		*emu;
};

static int emu__copy_feat(struct feat_copier *fc, int feat, struct feat_writer *fw)
{
	struct emu *emu = container_of(fc, struct emu_fc, fc)->emu;
	struct perf_file_section *sec = &emu->secs[feat];
	int fd = perf_data__fd(emu->session->data);
	void *buf;
	int err;

	if (!sec->offset)
		return 0;	/* not in the input: perf writes it */
	buf = malloc(sec->size ?: 1);
	if (!buf)
		return -ENOMEM;
	err = preadn(fd, buf, sec->size, sec->offset) == (ssize_t)sec->size ? 0 : -EIO;
	if (!err && feat == HEADER_EVENT_DESC) {
		err = emu__patch_event_desc(emu, buf, sec->size);
		if (err)
			pr_err("cannot patch the event descriptions (HEADER_EVENT_DESC)\n");
	}
	if (!err)
		err = fw->write(fw, buf, sec->size);
	free(buf);
	return err ?: 1;
}

/* ---- ground truth ---- */

static const char * const emu_return_names[] = {
	[EMU_RET_NONE]		= "none",
	[EMU_RET_USER]		= "user",
	[EMU_RET_SYS_EXIT]	= "sys_exit",
	[EMU_RET_FALLBACK]	= "fallback",
	[EMU_RET_EXIT]		= "exit",
};

/* The user entries a stitcher can use from @rec's record, as written. */
static size_t emu__record_usable(struct emu *emu, const struct emu_record *rec)
{
	const struct unwind_kmodel_event *log = &unwind_kmodel__events(emu->km, NULL)[rec->log_idx];
	size_t nr = unwind_callchain__sanitize(log->ips, log->nr, NULL);

	if (rec->bogus_at != EMU_NONE && (size_t)rec->bogus_at < nr)
		nr = rec->bogus_at;
	return nr;
}

static void emu__truth_faults(FILE *fp, const char *late, const struct emu_record *rec)
{
	const char *sep = "";

	fprintf(fp, "\"faults\":[");
	if (late) {
		fprintf(fp, "\"%s\"", late);
		sep = ",";
	}
	if (rec && !rec->copies) {
		fprintf(fp, "%s\"drop\"", sep);
		sep = ",";
	}
	if (rec && rec->copies > 1) {
		fprintf(fp, "%s\"duplicate\"", sep);
		sep = ",";
	}
	if (rec && rec->bogus_at != EMU_NONE)
		fprintf(fp, "%s\"bogus-ip\"", sep);
	fprintf(fp, "]");
}

static void emu__truth_sample(struct emu *emu, FILE *fp, const struct emu_event *e, u64 n)
{
	const struct unwind_kmodel_event *log = NULL;
	const struct emu_record *rec = NULL;
	const struct emu_entry *entry;
	const char *expect, *why = "";
	size_t usable = 0;
	u32 nr_user = 0;

	if (e->model_idx != EMU_NONE)
		log = &unwind_kmodel__events(emu->km, NULL)[e->model_idx];
	fprintf(fp, "{\"sample\":%" PRIu64 ",\"time\":%" PRIu64, n, e->time);
	fprintf(fp, ",\"pid\":%d,\"tid\":%d,\"cpu\":%d,\"event\":\"%s\",", (int)e->pid,
		(int)e->tid, (int)e->cpu, e->evsel ? evsel__name(e->evsel) : "");
	if (!log || !log->cookie) {
		fprintf(fp, "\"cookie\":null,\"expect\":\"not-deferred\"}\n");
		return;
	}
	entry = &emu->entries[e->entry];
	if (entry->record != EMU_NONE)
		rec = &emu->records[entry->record];
	emu_event__user(e, &nr_user);

	if (!rec) {
		expect = "orphan";
		why = "no-record";
	} else if (!rec->copies) {
		expect = "orphan";
		why = "drop";
	} else if (!log->truth_known) {
		expect = "orphan";
		why = "exec";
	} else {
		usable = emu__record_usable(emu, rec);
		expect = usable ? "stitched" : "orphan";
		why = usable ? "" : "empty";
	}
	fprintf(fp, "\"cookie\":\"%#" PRIx64 "\",\"entry\":%d,\"return\":\"%s\",\"late\":%s,",
		log->cookie, e->entry, emu_return_names[entry->how], log->late ? "true" : "false");
	if (rec)
		fprintf(fp, "\"record_time\":%" PRIu64 ",\"record_cpu\":%u,", rec->time, rec->cpu);
	emu__truth_faults(fp, log->late ? "late" : NULL, rec);
	fprintf(fp, ",\"nr_user\":%u,\"nr_user_usable\":%zu,\"expect\":\"%s\"", nr_user,
		usable, expect);
	if (*why)
		fprintf(fp, ",\"orphan\":\"%s\"", why);
	fprintf(fp, "}\n");
}

static int emu__write_truth(struct emu *emu, FILE *fp)
{
	const struct deferred_emulate_opts *o = emu->opts;
	const struct unwind_kmodel_event *log = unwind_kmodel__events(emu->km, NULL);
	size_t i;
	u64 n = 0;

	fprintf(fp, "{\"truth\":\"perf stitch --emulate\",\"version\":1");
	fprintf(fp, ",\"seed\":%" PRIu64 ",\"drop\":%g,\"duplicate\":%g,\"late\":%g", o->seed,
		o->drop, o->duplicate, o->late);
	fprintf(fp, ",\"bogus_ip\":%g,\"exit_records\":%s", o->bogus_ip,
		o->exit_records ? "true" : "false");
	fprintf(fp, ",\"samples\":%" PRIu64 ",\"deferred\":%" PRIu64 ",\"entries\":%" PRIu64,
		emu->stats->samples, emu->stats->deferred, emu->stats->entries);
	fprintf(fp, ",\"records\":%zu}\n", emu->nr_records);
	for (i = 0; i < emu->nr_ev; i++)
		if (emu->ev[i].kind == EMU_K_SAMPLE)
			emu__truth_sample(emu, fp, &emu->ev[i], n++);
	for (i = 0; i < emu->nr_records; i++) {
		const struct emu_record *rec = &emu->records[i];
		const struct unwind_kmodel_event *l = &log[rec->log_idx];

		fprintf(fp, "{\"record\":%zu,\"entry\":%d,\"pid\":%d,\"tid\":%d,\"time\":%" PRIu64
			",\"cpu\":%u,\"cookie\":\"%#" PRIx64 "\",\"nr\":%zu,\"copies\":%u,",
			i, rec->entry, (int)l->pid, (int)l->tid, rec->time, rec->cpu, l->cookie,
			l->nr, rec->copies);
		emu__truth_faults(fp, NULL, rec);
		if (rec->bogus_at != EMU_NONE)
			fprintf(fp, ",\"bogus_at\":%ld,\"bogus_ip\":\"%#" PRIx64 "\"",
				rec->bogus_at, rec->bogus_ip);
		fprintf(fp, "}\n");
	}
	return ferror(fp) ? -EIO : 0;
}

static void emu__count(struct emu *emu)
{
	struct deferred_emulate_stats *st = emu->stats;
	size_t i;

	st->samples = emu->nr_samples;
	st->entries = emu->nr_entries;
	for (i = 0; i < emu->nr_ev; i++) {
		const struct emu_event *e = &emu->ev[i];

		if (e->model_idx == EMU_NONE ||
		    !unwind_kmodel__events(emu->km, NULL)[e->model_idx].cookie)
			continue;
		st->deferred++;
		if (e->flags & EMU_F_USER)
			st->user_mode++;
		if (unwind_kmodel__events(emu->km, NULL)[e->model_idx].late)
			st->late++;
	}
	for (i = 0; i < emu->nr_entries; i++) {
		const struct emu_entry *entry = &emu->entries[i];

		if (entry->how == EMU_RET_SYS_EXIT)
			st->ret_sys_exit++;
		else if (entry->how == EMU_RET_FALLBACK)
			st->ret_fallback++;
		else if (entry->how == EMU_RET_EXIT)
			st->ret_exit++;
		if (entry->record != EMU_NONE && emu->records[entry->record].cpu != entry->first_cpu)
			st->migrated++;
	}
	for (i = 0; i < emu->nr_records; i++) {
		st->records += emu->records[i].copies;
		st->dropped += !emu->records[i].copies;
		st->duplicated += emu->records[i].copies > 1;
		st->bogus += emu->records[i].bogus_at != EMU_NONE;
	}
}

/* ---- temporary files, removed on errors and signals ---- */

static char emu_tmp[2][PATH_MAX];

static void emu__sig_cleanup(int sig)
{
	if (emu_tmp[0][0])
		unlink(emu_tmp[0]);
	if (emu_tmp[1][0])
		unlink(emu_tmp[1]);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* A temporary file next to @path; its name in emu_tmp[@slot]. */
static int emu__tmp_open(const char *path, int slot)
{
	int fd;

	if (snprintf(emu_tmp[slot], PATH_MAX, "%s.tmp-XXXXXX", path) >= PATH_MAX) {
		emu_tmp[slot][0] = '\0';
		return -ENAMETOOLONG;
	}
	fd = mkstemp(emu_tmp[slot]);
	if (fd < 0) {
		int err = -errno;

		pr_err("cannot create a file next to %s: %s\n", path, strerror(errno));
		emu_tmp[slot][0] = '\0';
		return err;
	}
	fchmod(fd, 0600);
	return fd;
}

static void emu__tmp_remove(int slot)
{
	if (emu_tmp[slot][0])
		unlink(emu_tmp[slot]);
	emu_tmp[slot][0] = '\0';
}

static int emu__tmp_commit(const char *path, int slot)
{
	if (rename(emu_tmp[slot], path)) {
		int err = -errno;

		pr_err("cannot rename %s to %s: %s\n", emu_tmp[slot], path, strerror(errno));
		return err;
	}
	emu_tmp[slot][0] = '\0';
	return 0;
}

static bool emu__same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return !stat(a, &sa) && !stat(b, &sb) && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* ---- the emulation ---- */

static int emu__check_opts(const struct deferred_emulate_opts *opts)
{
	const double *f[] = { &opts->drop, &opts->duplicate, &opts->late, &opts->bogus_ip };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(f); i++) {
		if (!(*f[i] >= 0.0 && *f[i] <= 1.0)) {
			pr_err("fault fractions must be between 0 and 1\n");
			return -EINVAL;
		}
	}
	if (!opts->output) {
		pr_err("no output file (-o)\n");
		return -EINVAL;
	}
	if (!strcmp(opts->input, "-") != !strcmp(opts->output, "-")) {
		pr_err("pipe mode needs both input and output to be pipes (-i - -o -)\n");
		return -EINVAL;
	}
	if (strcmp(opts->output, "-") && emu__same_file(opts->input, opts->output)) {
		pr_err("the output would replace the input\n");
		return -EINVAL;
	}
	return 0;
}

static void emu__free(struct emu *emu)
{
	struct int_node *node;
	size_t i;

	for (i = 0; i < emu->nr_ev; i++)
		free(emu->ev[i].event);
	free(emu->ev);
	if (emu->tasks) {
		intlist__for_each_entry(node, emu->tasks)
			free(node->priv);
		intlist__delete(emu->tasks);
	}
	unwind_kmodel__delete(emu->km);
	free(emu->entries);
	free(emu->records);
	free(emu->track_id);
}

static int emu__write_file(struct emu *emu, struct emu_out *out)
{
	struct perf_session *session = emu->session;
	struct perf_header *header = &session->header;
	struct emu_fc fc = { .fc.copy = emu__copy_feat, .emu = emu };
	struct evsel *evsel;
	u64 data_offset;
	int err;

	evlist__for_each_entry(session->evlist, evsel)
		emu__set_attr_bits(emu, evsel, &evsel->core.attr);
	data_offset = perf_session__data_offset(session->evlist);
	if (lseek(out->fd, data_offset, SEEK_SET) == (off_t)-1)
		return -errno;
	err = emu__write_data(emu, out);
	if (err)
		return err;
	/* the data is written uncompressed */
	perf_header__clear_feat(header, HEADER_COMPRESSED);
	header->data_offset = data_offset;
	header->data_size = out->written;
	return perf_session__inject_header(session, session->evlist, out->fd, &fc.fc);
}

int deferred_emulate(const struct deferred_emulate_opts *opts,
		     struct deferred_emulate_stats *stats)
{
	struct perf_data data = {
		.path	= opts->input,
		.mode	= PERF_DATA_MODE_READ,
		.force	= opts->force,
	};
	struct emu *emu;
	struct emu_out *out = NULL;
	FILE *truth = NULL;
	int fd = -1, truth_fd = -1, err;
	sighandler_t old_int, old_term;

	memset(stats, 0, sizeof(*stats));
	err = emu__check_opts(opts);
	if (err)
		return err;
	emu = zalloc(sizeof(*emu));
	out = zalloc(sizeof(*out));
	if (!emu || !out) {
		free(emu);
		free(out);
		return -ENOMEM;
	}
	emu->opts = opts;
	emu->stats = stats;
	emu->pipe = !strcmp(opts->input, "-");
	emu_rng__init(&emu->rng_drop, opts->seed, 1);
	emu_rng__init(&emu->rng_dup, opts->seed, 2);
	emu_rng__init(&emu->rng_late, opts->seed, 3);
	emu_rng__init(&emu->rng_bogus, opts->seed, 4);
	emu__init_tool(&emu->tool);

	old_int = signal(SIGINT, emu__sig_cleanup);
	old_term = signal(SIGTERM, emu__sig_cleanup);

	emu->session = perf_session__new(&data, &emu->tool);
	if (IS_ERR(emu->session)) {
		err = PTR_ERR(emu->session);
		emu->session = NULL;
		pr_err("cannot read %s\n", opts->input);
		goto out;
	}
	if (emu->session->header.needs_swap) {
		pr_err("%s: a file of the other byte order is not supported\n", opts->input);
		err = -EINVAL;
		goto out;
	}
	if (zstd_init(&emu->session->zstd_data, 0) < 0)
		pr_warning("decompression initialization failed\n");

	if (!emu->pipe) {
		err = perf_header__process_sections(&emu->session->header,
						    perf_data__fd(emu->session->data),
						    emu, emu__save_section);
		if (err)
			goto out;
		if (perf_header__has_feat(&emu->session->header, HEADER_AUXTRACE)) {
			pr_err("AUX area tracing data is not supported\n");
			err = -EINVAL;
			goto out;
		}
		/* refuse early what cannot be emulated */
		emu__find_events(emu, emu->session->evlist);
		err = emu__check_evlist(emu, emu->session->evlist);
		if (err)
			goto out;
	}

	err = perf_session__process_events(emu->session);
	if (!err)
		err = emu->err;
	if (!err)
		err = emu__prepare_events(emu);
	if (err)
		goto out;

	err = emu__run_model(emu);
	if (!err)
		err = emu__place_records(emu);
	if (err)
		goto out;
	emu__count(emu);

	if (emu->pipe) {
		out->fd = STDOUT_FILENO;
		err = perf_header__write_pipe(out->fd);
		if (!err)
			err = emu__write_data(emu, out);
	} else {
		fd = emu__tmp_open(opts->output, 0);
		if (fd < 0) {
			err = fd;
			goto out;
		}
		out->fd = fd;
		err = emu__write_file(emu, out);
		if (err)
			pr_err("cannot write %s: %s\n", opts->output, strerror(-err));
	}
	if (err)
		goto out;

	if (opts->truth) {
		truth_fd = emu__tmp_open(opts->truth, 1);
		if (truth_fd < 0) {
			err = truth_fd;
			goto out;
		}
		truth = fdopen(truth_fd, "w");
		if (!truth) {
			err = -errno;
			close(truth_fd);
			goto out;
		}
		err = emu__write_truth(emu, truth);
		if (fclose(truth) && !err)
			err = -errno;
		if (err) {
			pr_err("cannot write %s\n", opts->truth);
			goto out;
		}
	}
	if (fd >= 0) {
		if (close(fd)) {
			err = -errno;
			fd = -1;
			goto out;
		}
		fd = -1;
		err = emu__tmp_commit(opts->output, 0);
	}
	if (!err && opts->truth)
		err = emu__tmp_commit(opts->truth, 1);
out:
	if (fd >= 0)
		close(fd);
	emu__tmp_remove(0);
	emu__tmp_remove(1);
	signal(SIGINT, old_int);
	signal(SIGTERM, old_term);
	if (emu->session) {
		zstd_fini(&emu->session->zstd_data);
		perf_session__delete(emu->session);
	}
	emu__free(emu);
	free(emu);
	free(out);
	return err;
}

void deferred_emulate__fprintf_stats(const struct deferred_emulate_stats *st, const char *cmd)
{
	fprintf(stderr, "%s: %" PRIu64 " of %" PRIu64 " samples deferred (%" PRIu64
		" in user mode, %" PRIu64 " late), %" PRIu64 " kernel entries, %" PRIu64
		" records written (%" PRIu64 " dropped, %" PRIu64 " duplicated, %" PRIu64
		" with a bogus ip); entries ended at sys_exit %" PRIu64 ", at exit %" PRIu64
		", by fallback %" PRIu64 "; %" PRIu64 " returned on another CPU\n",
		cmd, st->deferred, st->samples, st->user_mode, st->late, st->entries, st->records,
		st->dropped, st->duplicated, st->bogus, st->ret_sys_exit, st->ret_exit,
		st->ret_fallback, st->migrated);
	if (!st->have_cpu)
		fprintf(stderr, "%s: the samples do not say on which CPU they were taken (record with --sample-cpu): every cookie and record is on CPU 0\n",
			cmd);
	if (!st->have_sys_exit)
		fprintf(stderr, "%s: no %s samples (record with -e %s): system call returns are estimated\n",
			cmd, DEFERRED_EMULATE_RETURN_EVENT, DEFERRED_EMULATE_RETURN_EVENT);
	if (!st->have_switch)
		fprintf(stderr, "%s: no context switch records (record with --switch-events): a task that sleeps in the kernel returns on the CPU it fell asleep on\n",
			cmd);
}

/* ---- perf record --call-graph deferred,emulate ---- */

int deferred_emulate__record_prepare(struct record_opts *opts, const char *output,
				     bool is_dir, bool switch_output, char **tmp_path)
{
	struct stat st;
	char *tmp;
	int fd;

	*tmp_path = NULL;
	if ((output && !strcmp(output, "-")) ||
	    (!output && !fstat(STDOUT_FILENO, &st) && S_ISFIFO(st.st_mode))) {
		pr_err("--call-graph deferred,emulate cannot write to a pipe\n");
		return -EINVAL;
	}
	if (is_dir || switch_output) {
		pr_err("--call-graph deferred,emulate writes a single perf.data file: not with --switch-output, --threads or --kcore\n");
		return -EINVAL;
	}
	/* what the emulation needs to place the records */
	opts->sample_cpu = true;
	if (perf_can_record_switch_events())
		opts->record_switch_events = true;

	if (asprintf(&tmp, "%s.fp-XXXXXX", output ?: "perf.data") < 0)
		return -ENOMEM;
	fd = mkstemp(tmp);
	if (fd < 0) {
		pr_err("cannot create a file next to %s: %s\n", output ?: "perf.data",
		       strerror(errno));
		free(tmp);
		return -errno;
	}
	close(fd);
	*tmp_path = tmp;
	return 0;
}

void deferred_emulate__record_add_events(struct evlist *evlist, struct record_opts *opts)
{
	struct parse_events_error err;
	bool allowed;

	if (!is_valid_tracepoint(DEFERRED_EMULATE_RETURN_EVENT)) {
		pr_debug("%s not available: system call returns will be estimated\n",
			 DEFERRED_EMULATE_RETURN_EVENT);
		return;
	}
	/* per task, the syscall tracepoints are open to everyone (TRACE_EVENT_FL_CAP_ANY) */
	allowed = !target__has_cpu(&opts->target) || !geteuid() ||
		  perf_cap__capable(CAP_PERFMON) || perf_event_paranoid() <= -1;
	if (!allowed) {
		pr_debug("%s not permitted system wide: system call returns will be estimated\n",
			 DEFERRED_EMULATE_RETURN_EVENT);
		return;
	}
	parse_events_error__init(&err);
	if (parse_events(evlist, DEFERRED_EMULATE_RETURN_EVENT "/call-graph=no/", &err))
		pr_debug("cannot add %s: system call returns will be estimated\n",
			 DEFERRED_EMULATE_RETURN_EVENT);
	parse_events_error__exit(&err);
}

int deferred_emulate__record_finish(const char *tmp_path, const char *output, bool silent)
{
	struct deferred_emulate_opts opts = {
		.input		= tmp_path,
		.output		= output ?: "perf.data",
		.exit_records	= true,
	};
	struct deferred_emulate_stats stats;
	struct stat st;
	char *old;
	int err;

	/* as perf record does with its output */
	if (!stat(opts.output, &st) && st.st_size && asprintf(&old, "%s.old", opts.output) >= 0) {
		if (rename(opts.output, old))
			pr_warning("cannot rename %s to %s: %s\n", opts.output, old,
				   strerror(errno));
		free(old);
	}
	err = deferred_emulate(&opts, &stats);
	if (err) {
		pr_err("perf record: emulating deferred callchains failed; the frame-pointer recording is in %s\n",
		       tmp_path);
		return err;
	}
	unlink(tmp_path);
	if (!silent) {
		fprintf(stderr, "[ perf record: the kernel did not defer user callchains: emulated (perf stitch --emulate), wrote %s with %" PRIu64 " deferred samples and %" PRIu64 " CALLCHAIN_DEFERRED records ]\n",
			opts.output, stats.deferred, stats.records);
		if (verbose > 0)
			deferred_emulate__fprintf_stats(&stats, "perf record");
	}
	return 0;
}
