/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What perf stitch -F aggregates while it reads (util/deferred-export.c)
 * and its writers turn into folded stacks or a speedscope profile
 * (util/deferred-export-write.c) or a pprof profile
 * (util/deferred-export-pprof.c): interned frames, interned stacks, the
 * folded counts, the per-thread sample runs and the pprof samples.
 */
#ifndef __PERF_DEFERRED_EXPORT_STACKS_H
#define __PERF_DEFERRED_EXPORT_STACKS_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>

#include "deferred-export.h"
#include "hashmap.h"

/*
 * The u32 ids of keys that live in one of the arrays below, by the hash
 * of the key: the arrays move as they grow, so the map holds each id
 * under its key's hash (several under one, as hashmap__append() adds
 * them) and the caller's match() tells the keys apart.
 */
struct export_id_table {
	struct hashmap		map;	/* hash -> id; hash_fn NULL: not in use yet */
};

/*
 * A frame as perf script prints it: the symbol name (NULL: no symbol) and
 * the name of the dso (NULL: no map: "[unknown]").
 */
struct export_frame {
	char	*name;
	char	*dso_name;
	bool	kernel;		/* of the kernel part of the chain */
	bool	inlined;	/* perf script: "(inlined)" instead of the dso */
	bool	named;		/* a name of ours, no symbol: "[off-cpu: S]" */
	/*
	 * identity while reading: the dso and symbol it was resolved to; an
	 * inlined function has a symbol of its own at each address it is
	 * inlined at, so it goes by its name (sym_key NULL)
	 */
	const void *dso_key;
	const void *sym_key;
	/* pprof: the first address seen, its map and the dso's build id */
	u64	addr;
	u64	map_start, map_end, map_pgoff;
	char	*build_id;		/* hex, NULL: none */
	/* folded names, made by the folded writer when first needed */
	char	*folded;
	char	*folded_java;
};

/* A stack: frame ids, leaf first, at stack_frames[off .. off + len). */
struct export_stack {
	size_t	off;
	u32	len;
};

/* folded: samples per (root frame name, stack) */
struct export_count {
	u32	root;		/* index into roots */
	u32	stack;
	u64	count;
};

/* How a sample's user part came */
enum export_status {
	EXPORT_STATUS__NOT_DEFERRED,
	EXPORT_STATUS__STITCHED,
	EXPORT_STATUS__UNSTITCHED,	/* read without stitching */
	EXPORT_STATUS__ORPHAN,		/* + the orphan reason */
};

/* pprof: samples per (stack, thread, comm, how the user part came) */
struct export_pprof_sample {
	u32	stack;
	u32	thread;		/* index into threads */
	u32	comm;		/* index into roots: the comm at the sample */
	u32	status;		/* enum export_status, + reason for orphans */
	u64	samples;
	u64	weight;
};

/* speedscope: consecutive samples of a thread with the same stack */
struct export_run {
	u32	stack;
	u32	count;		/* samples */
	u64	weight;		/* their weights */
};

struct thread;

struct export_thread {
	int			pid;
	int			tid;
	/* speedscope: its last comm, set when the input is read */
	char			*comm;
	/* until then the thread of its last sample */
	struct thread		*thread;
	struct export_run	*runs;
	u32			nr_runs;
	u32			alloc_runs;
	u64			samples;
	u64			weight;
};

struct export_stacks {
	const struct deferred_export_opts *opts;

	struct export_frame	*frames;
	u32			nr_frames, alloc_frames;
	/* (dso, symbol, kernel); an inlined function: (dso, its name, kernel) */
	struct export_id_table	frame_ids;

	/*
	 * Each address resolved once: (dso, address in it, kernel) -> the
	 * frames perf script shows there, the functions inlined at it
	 * (innermost first) and then the one they are inlined in, at
	 * addr_frames[frames .. frames + nr_frames).  Without a map: (NULL,
	 * the address, kernel).
	 */
	struct export_addr {
		const void	*dso;
		u64		addr;
		u32		frames;
		u16		nr_frames;
		bool		kernel;
	} *addrs;
	u32			nr_addrs, alloc_addrs;
	struct export_id_table	addr_ids;
	u32			*addr_frames;
	u32			nr_addr_frames, alloc_addr_frames;

	u32			*stack_frames;
	size_t			nr_stack_frames, alloc_stack_frames;
	struct export_stack	*stacks;
	u32			nr_stacks, alloc_stacks;
	struct export_id_table	stack_ids;

	/* folded root frames, comm[-PID[/TID]]; pprof: the samples' comms */
	char			**roots;
	u32			nr_roots, alloc_roots;
	struct export_id_table	root_ids;

	struct export_count	*counts;
	u32			nr_counts, alloc_counts;
	struct export_id_table	count_ids;

	/* samples exported, and of them those whose period is in ns (cpu/task-clock) */
	u64			weighed, weighed_ns;

	struct export_pprof_sample *pprof;
	u32			nr_pprof, alloc_pprof;
	struct export_id_table	pprof_ids;
	u64			first_time, last_time;	/* of the samples exported */

	struct export_thread	*threads;
	u32			nr_threads, alloc_threads;
	struct export_id_table	thread_ids;
};

/* perf's name of a frame: the symbol, "[<dso file>]" or "[unknown]"; NULL: no memory */
char *export_frame__name(const struct export_frame *f);

/* The writers; each returns 0 or -errno (-EIO: a write failed). */
int export_stacks__write_folded(struct export_stacks *es, FILE *fp,
				struct deferred_export_stats *stats);
int export_stacks__write_speedscope(struct export_stacks *es, FILE *fp, const char *name,
				    struct deferred_export_stats *stats);
int export_stacks__write_pprof(struct export_stacks *es, FILE *fp,
			       struct deferred_export_stats *stats);

#endif /* __PERF_DEFERRED_EXPORT_STACKS_H */
