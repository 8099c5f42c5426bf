/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Emulation of Linux 6.19 deferred user callchains on older kernels: a
 * frame-pointer recording is rewritten into what a 6.19 kernel with
 * attr.defer_callchain would have written (samples ending in
 * PERF_CONTEXT_USER_DEFERRED + cookie, the user stacks in
 * PERF_RECORD_CALLCHAIN_DEFERRED records), driven by libunwind-cookie's
 * kernel model.  Used by 'perf stitch --emulate' and 'perf record
 * --call-graph deferred,emulate'.  See Documentation/perf-stitch.txt.
 */
#ifndef __PERF_DEFERRED_EMULATE_H
#define __PERF_DEFERRED_EMULATE_H

#include <stdbool.h>
#include <linux/types.h>

struct evlist;
struct record_opts;

/* The event whose samples mark the return from a system call. */
#define DEFERRED_EMULATE_RETURN_EVENT	"raw_syscalls:sys_exit"

struct deferred_emulate_opts {
	const char	*input;		/* a perf.data path, or "-" (pipe) */
	const char	*output;	/* a path, or "-" (pipe, with a pipe input) */
	const char	*truth;		/* JSON lines ground truth, or NULL */
	/* Fault injection, each a fraction in [0, 1], drawn from @seed. */
	u64		seed;
	double		drop;		/* records not written */
	double		duplicate;	/* records written twice */
	double		late;		/* entries whose last sample comes after the record */
	double		bogus_ip;	/* records with an ip >= PERF_CONTEXT_MAX inserted */
	/* A task exiting inside the kernel still writes its pending record. */
	bool		exit_records;
	bool		force;		/* perf_data::force: files owned by others */
};

/* What the emulation did, for the summary. */
struct deferred_emulate_stats {
	u64	samples;		/* every PERF_RECORD_SAMPLE */
	u64	deferred;		/* samples given a cookie */
	u64	user_mode;		/* of those: taken in user mode */
	u64	entries;		/* kernel entries (cookies) */
	u64	records;		/* type-22 records written, duplicates included */
	u64	dropped;
	u64	duplicated;
	u64	bogus;
	u64	late;			/* late samples */
	u64	ret_sys_exit;		/* entries ended at a sys_exit sample */
	u64	ret_fallback;		/* ... at a fallback point */
	u64	ret_exit;		/* ... by the task's exit */
	u64	migrated;		/* entries that returned on another CPU */
	bool	have_cpu;		/* the samples say on which CPU they were taken */
	bool	have_sys_exit;
	bool	have_switch;
};

/*
 * Reads opts->input, writes opts->output through a temporary file that is
 * renamed only on success (the truth file likewise).  Returns 0 or a
 * negative error, having printed why.
 */
int deferred_emulate(const struct deferred_emulate_opts *opts,
		     struct deferred_emulate_stats *stats);

/* One line on stderr: what deferred_emulate() did, prefixed with @cmd. */
void deferred_emulate__fprintf_stats(const struct deferred_emulate_stats *stats,
				     const char *cmd);

/*
 * perf record --call-graph deferred,emulate.
 *
 * deferred_emulate__record_prepare(): after option parsing; refuses what
 * cannot be emulated (pipe or directory output, --switch-output) and asks
 * for what the emulation needs: the CPU in every sample and context switch
 * records.  *@tmp_path gets the file perf record must write instead of
 * @output; the emulation writes @output from it.
 *
 * deferred_emulate__record_add_events(): after the default event was
 * added: raw_syscalls:sys_exit, without callchains, when the tracepoint
 * exists and may be opened (system wide: with CAP_PERFMON or
 * perf_event_paranoid -1).
 *
 * deferred_emulate__record_finish(): after a successful recording: runs the
 * emulation, removes @tmp_path on success and says on stderr that the
 * deferred format was emulated; on failure keeps @tmp_path and says so.
 */
int deferred_emulate__record_prepare(struct record_opts *opts, const char *output,
				     bool is_dir, bool switch_output, char **tmp_path);
void deferred_emulate__record_add_events(struct evlist *evlist, struct record_opts *opts);
int deferred_emulate__record_finish(const char *tmp_path, const char *output, bool silent);

#endif /* __PERF_DEFERRED_EMULATE_H */
