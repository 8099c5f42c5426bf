// SPDX-License-Identifier: GPL-2.0
/*
 * Emulation of deferred user callchains: reading and checking the input.
 *
 * Every record of the input is kept, in file order, in emu::ev (a copy);
 * samples whose user part is to be deferred are flagged with where their
 * user chain is.  Inputs that cannot be emulated are refused here.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <linux/compiler.h>
#include <linux/kernel.h>
#include <linux/string.h>
#include <perf/event.h>

#include "debug.h"
#include "env.h"
#include "event.h"
#include "evlist.h"
#include "evsel.h"
#include "header.h"
#include "sample.h"
#include "session.h"
#include "tool.h"
#include "deferred-callchain.h"
#include "deferred-emulate.h"
#include "deferred-emulate-internal.h"

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

void deferred_emulate__find_events(struct emu *emu, struct evlist *evlist)
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

void deferred_emulate__set_attr_bits(struct emu *emu, struct evsel *evsel,
				     struct perf_event_attr *attr)
{
	if (evsel__emu_defers(evsel))
		attr->defer_callchain = 1;
	if (evsel == emu->tracking)
		attr->defer_output = 1;
}

/* ---- reading the input ---- */

int deferred_emulate__grow(void **array, size_t *cap, size_t nr, size_t size)
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
	if (deferred_emulate__grow((void **)&emu->ev, &emu->cap_ev, emu->nr_ev, sizeof(*emu->ev))) {
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

static int emu__keep(const struct perf_tool *tool, union perf_event *event,
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

static int emu__sample(const struct perf_tool *tool, union perf_event *event,
		       struct perf_sample *sample, struct machine *machine __maybe_unused)
{
	struct emu *emu = container_of(tool, struct emu, tool);
	struct evsel *evsel = sample->evsel;
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

	if (callchain__has_deferred_tail(chain)) {
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

static int emu__read(const struct perf_tool *tool, union perf_event *event,
		     struct perf_sample *sample, struct machine *machine)
{
	return emu__keep(tool, event, sample, machine);
}

static int emu__round(const struct perf_tool *tool, union perf_event *event,
		      struct ordered_events *oe __maybe_unused)
{
	struct emu *emu = container_of(tool, struct emu, tool);

	if (!emu__add(emu, event, EMU_K_ROUND))
		return emu->err;
	emu->round++;
	return 0;
}

static int emu__keep_op2(const struct perf_tool *tool,
			 struct perf_session *session __maybe_unused,
			 union perf_event *event)
{
	struct emu *emu = container_of(tool, struct emu, tool);

	return emu__add(emu, event, EMU_K_OTHER) ? 0 : emu->err;
}

static int emu__keep_feature(const struct perf_tool *tool, struct perf_session *session,
			     union perf_event *event)
{
	int err = perf_event__process_feature(tool, session, event);

	return err ?: emu__keep_op2(tool, session, event);
}

static int emu__keep_id_index(const struct perf_tool *tool, struct perf_session *session,
			      union perf_event *event)
{
	int err = perf_event__process_id_index(tool, session, event);

	return err ?: emu__keep_op2(tool, session, event);
}

static int emu__attr(const struct perf_tool *tool, union perf_event *event,
		     struct evlist **pevlist)
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

static int emu__event_update(const struct perf_tool *tool, union perf_event *event,
			     struct evlist **pevlist)
{
	struct emu *emu = container_of(tool, struct emu, tool);
	int err = perf_event__process_event_update(tool, event, pevlist);

	if (err)
		return err;
	return emu__add(emu, event, EMU_K_OTHER) ? 0 : emu->err;
}

static int emu__refuse_deferred(const struct perf_tool *tool __maybe_unused,
				union perf_event *event __maybe_unused,
				struct perf_sample *sample __maybe_unused,
				struct machine *machine __maybe_unused)
{
	pr_err("the input already has PERF_RECORD_CALLCHAIN_DEFERRED records\n");
	return -EINVAL;
}

static int emu__refuse_tracing_data(const struct perf_tool *tool __maybe_unused,
				    struct perf_session *session __maybe_unused,
				    union perf_event *event __maybe_unused)
{
	pr_err("tracepoint data in a pipe is not supported: record to a file\n");
	return -EINVAL;
}

static s64 emu__refuse_auxtrace(const struct perf_tool *tool __maybe_unused,
				struct perf_session *session __maybe_unused,
				union perf_event *event __maybe_unused)
{
	pr_err("AUX area tracing data is not supported\n");
	return -EINVAL;
}

static int emu__refuse_auxtrace_info(const struct perf_tool *tool, struct perf_session *session,
				     union perf_event *event)
{
	return emu__refuse_auxtrace(tool, session, event);
}

void deferred_emulate__init_tool(struct perf_tool *tool)
{
	/* in file order; every callback set: the ones not assigned below are perf's defaults */
	perf_tool__init(tool, /*ordered_events=*/false);
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
	tool->bpf_metadata	= emu__keep_op2;
	tool->schedstat_cpu	= emu__keep_op2;
	tool->schedstat_domain	= emu__keep_op2;
	tool->auxtrace		= emu__refuse_auxtrace;
	/* compressed: the default decompresses and hands us the records */
	tool->dont_split_sample_group = true;
}

/* ---- checks before reading the data ---- */

int deferred_emulate__check_evlist(struct emu *emu, struct evlist *evlist)
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
		if (!(attr->sample_type & PERF_SAMPLE_TIME) ||
		    !(attr->sample_type & PERF_SAMPLE_TID)) {
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
int deferred_emulate__prepare_events(struct emu *emu)
{
	struct evlist *evlist = emu->session->evlist;
	struct perf_env *env = perf_session__env(emu->session);
	struct evsel *evsel;
	bool cpu = true, ids = true;
	size_t i;
	u32 k;
	int err;

	deferred_emulate__find_events(emu, evlist);
	err = deferred_emulate__check_evlist(emu, evlist);
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
