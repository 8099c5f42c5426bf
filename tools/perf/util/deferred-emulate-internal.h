/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the pieces of the deferred callchain emulation share; the API is
 * deferred-emulate.h.  The files, in the order the data flows through them:
 *
 *   deferred-emulate-read.c   reading and checking the input: every record,
 *                             in file order, into struct emu
 *   deferred-emulate-model.c  the kernel entries and their return points,
 *                             driving libunwind-cookie's kernel model
 *   deferred-emulate-write.c  where the records go in the output, fault
 *                             injection, writing the data and the header
 *   deferred-emulate-truth.c  the ground truth (--truth)
 *   deferred-emulate.c        the driver, the counts for the summary,
 *                             temporary files, and the perf record
 *                             --call-graph deferred,emulate hooks
 */
#ifndef __PERF_DEFERRED_EMULATE_INTERNAL_H
#define __PERF_DEFERRED_EMULATE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

#include "header.h"
#include "tool.h"

struct deferred_emulate_opts;
struct deferred_emulate_stats;
struct evlist;
struct evsel;
struct intlist;
struct perf_event_attr;
struct perf_session;
struct stitch_buf;
struct unwind_kmodel;
union perf_event;

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
	/* derived: see deferred_emulate__prepare_events() */
	u32			cpu;
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

static inline u64 emu_rng__next(struct emu_rng *rng)
{
	u64 z = (rng->state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* true with probability @fraction; always draws, so streams stay aligned */
static inline bool emu_rng__chance(struct emu_rng *rng, double fraction)
{
	double u = (emu_rng__next(rng) >> 11) * (1.0 / 9007199254740992.0);

	return u < fraction;
}

static inline void emu_rng__init(struct emu_rng *rng, u64 seed, u64 stream)
{
	rng->state = seed ^ (stream * 0xd1b54a32d192ed03ULL);
	emu_rng__next(rng);
}

/* The user part of @e's callchain, after its PERF_CONTEXT_USER: *@nr entries. */
static inline const u64 *emu_event__user(const struct emu_event *e, u32 *nr)
{
	const u64 *ips = (const u64 *)((const char *)e->event + e->chain_off) + 1;

	*nr = e->chain_nr - e->user_at - 1;
	return ips + e->user_at + 1;
}

/* ---- deferred-emulate-read.c ---- */

/* Finds the tracking event (the first with mmap/comm/task, else the first) and sys_exit. */
void deferred_emulate__find_events(struct emu *emu, struct evlist *evlist);
/* Sets defer_callchain on deferring events and defer_output on the tracking one. */
void deferred_emulate__set_attr_bits(struct emu *emu, struct evsel *evsel,
				     struct perf_event_attr *attr);
/* Makes room in *@array (of *@cap elements of @size) for element @nr. */
int deferred_emulate__grow(void **array, size_t *cap, size_t nr, size_t size);
/* The perf_tool callbacks that keep every input record in emu::ev. */
void deferred_emulate__init_tool(struct perf_tool *tool);
/* Refuses inputs that cannot be emulated, naming the event. */
int deferred_emulate__check_evlist(struct emu *emu, struct evlist *evlist);
/* After reading: the events' CPUs, sys_exit flags, the tracking ids per CPU. */
int deferred_emulate__prepare_events(struct emu *emu);

/* ---- deferred-emulate-model.c ---- */

/* Finds the kernel entries and runs the kernel model: cookies and records. */
int deferred_emulate__run_model(struct emu *emu);

/* ---- deferred-emulate-write.c ---- */

/* Draws the faults of each record and where in the input it goes. */
int deferred_emulate__place_records(struct emu *emu);
/* Writes the data: the input's events, samples rewritten, the records placed. */
int deferred_emulate__write_data(struct emu *emu, struct stitch_buf *out);
/* Writes a perf.data file: the data, then the header with the features copied. */
int deferred_emulate__write_file(struct emu *emu, struct stitch_buf *out);

/* ---- deferred-emulate-truth.c ---- */

/* Writes the JSON lines ground truth: a header, one line per sample and record. */
int deferred_emulate__write_truth(struct emu *emu, FILE *fp);

#endif /* __PERF_DEFERRED_EMULATE_INTERNAL_H */
