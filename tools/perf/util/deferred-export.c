// SPDX-License-Identifier: GPL-2.0
/*
 * perf stitch -F folded|speedscope|pprof: reading and aggregating.
 *
 * The samples come from a perf_session in time order, stitched by the
 * session (util/deferred-callchain.c).  Each sample's callchain becomes a
 * stack of interned frames, walked the way thread__resolve_callchain()
 * walks a frame pointer chain for perf script (same context markers, same
 * max-stack cut, same pseudo-frame for a deferred user part, same frames
 * for the functions inlined at an address), but every distinct (dso,
 * address) is looked up once: the symbol and inline searches happen on
 * the first sight of an address only, and a chain a sample of the same
 * process had since the maps last changed is not walked at all.  Chains
 * perf has to unwind or stitch itself (DWARF user stacks, LBR call
 * stacks) go through thread__resolve_callchain() and are interned from
 * its cursor.
 *
 * Memory: frames, addresses and stacks are interned, so folded output
 * holds one counter per distinct (root frame, stack) and never grows with
 * the file.  Speedscope needs each thread's samples in order: they are
 * kept as runs of (u32 stack id, u32 count, u64 weight), 16 bytes per run
 * of identical consecutive stacks, at most 16 bytes per sample.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/compiler.h>
#include <linux/err.h>
#include <linux/kernel.h>
#include <linux/zalloc.h>

#include "addr_location.h"
#include "build-id.h"
#include "callchain.h"
#include "data.h"
#include "debug.h"
#include "compress.h"
#include "deferred-callchain.h"
#include "deferred-export.h"
#include "deferred-export-offcpu.h"
#include "deferred-export-stacks.h"
#include "deferred-frames.h"
#include "deferred-stitch.h"
#include "dso.h"
#include "event.h"
#include "evlist.h"
#include "evsel.h"
#include "machine.h"
#include "map.h"
#include "sample.h"
#include "session.h"
#include "srcline.h"
#include "stitch-output.h"
#include "symbol.h"
#include "thread.h"
#include "tool.h"

int deferred_export__parse_format(const char *str, enum deferred_export_format *format)
{
	if (!strcmp(str, "folded"))
		*format = DEFERRED_EXPORT__FOLDED;
	else if (!strcmp(str, "speedscope"))
		*format = DEFERRED_EXPORT__SPEEDSCOPE;
	else if (!strcmp(str, "pprof"))
		*format = DEFERRED_EXPORT__PPROF;
	else
		return -EINVAL;
	return 0;
}

/* ---- growing arrays and the id tables ---- */

int deferred_export__parse_count(const char *str, struct deferred_export_opts *opts)
{
	opts->count_samples = str && !strcmp(str, "samples");
	opts->wall = str && !strcmp(str, "wall");
	opts->off_cpu = opts->wall || (str && !strcmp(str, "off-cpu"));
	if (opts->off_cpu && sched_switch__check_readable(str))
		return -EOPNOTSUPP;
	return !str || opts->count_samples || opts->off_cpu || !strcmp(str, "period") ?
	       0 : -EINVAL;
}

static int export__grow(void *arrayp, size_t *alloc, size_t elem, size_t need)
{
	void **array = arrayp;
	size_t n = *alloc ? *alloc : 64;
	void *p;

	if (need <= *alloc)
		return 0;
	while (n < need)
		n *= 2;
	p = realloc(*array, n * elem);
	if (!p)
		return -ENOMEM;
	*array = p;
	*alloc = n;
	return 0;
}

/* For the u32 counts of the arrays; an id must stay below UINT32_MAX. */
static int export__grow32(void *arrayp, u32 *alloc, size_t elem, u32 need)
{
	size_t a = *alloc;
	int err;

	if (need >= UINT32_MAX)
		return -E2BIG;
	err = export__grow(arrayp, &a, elem, need);
	if (!err)
		*alloc = a > UINT32_MAX ? UINT32_MAX : a;
	return err;
}

static u32 export__mix(u64 h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return (u32)h;
}

static u32 export__hash_bytes(const void *p, size_t len)
{
	const unsigned char *c = p;
	u64 h = 0xcbf29ce484222325ULL;

	while (len--)
		h = (h ^ *c++) * 0x100000001b3ULL;
	return export__mix(h);
}

static size_t id_table__hash(long key, void *ctx __maybe_unused)
{
	return key;	/* already mixed */
}

static bool id_table__equal(long key1, long key2, void *ctx __maybe_unused)
{
	return key1 == key2;
}

/* The id whose key matches @key, of those under @hash, into @id: true if any */
static bool id_table__find(struct export_id_table *t, u32 hash,
			   bool (*match)(const struct export_stacks *es, u32 id, const void *key),
			   const struct export_stacks *es, const void *key, u32 *id)
{
	struct hashmap_entry *cur;

	hashmap__for_each_key_entry(&t->map, cur, (long)hash) {
		if (match(es, cur->value, key)) {
			*id = cur->value;
			return true;
		}
	}
	return false;
}

static int id_table__add(struct export_id_table *t, u32 hash, u32 id)
{
	if (!t->map.hash_fn)
		hashmap__init(&t->map, id_table__hash, id_table__equal, NULL);
	return hashmap__append(&t->map, (long)hash, (long)id);
}

/* ---- frames ---- */

struct frame_key {
	const void	*dso;
	const void	*sym;		/* NULL: none, or an inlined function */
	const char	*inlined;	/* the inlined function's name, or NULL */
	const char	*named;		/* export__named_frame()'s name, or NULL */
	bool		kernel;
};

static bool frame__match(const struct export_stacks *es, u32 id, const void *key)
{
	const struct export_frame *f = &es->frames[id];
	const struct frame_key *k = key;

	if (f->dso_key != k->dso || f->kernel != k->kernel || f->inlined != !!k->inlined ||
	    f->named != !!k->named)
		return false;
	if (k->named)
		return !strcmp(f->name, k->named);
	return k->inlined ? !strcmp(f->name, k->inlined) : f->sym_key == k->sym;
}

/*
 * A dso's identity in the frame and address tables.  With
 * REFCNT_CHECKING each reference to a dso is a pointer of its own: the
 * object referred to is the key, as it is without.
 */
static const void *export__dso_key(struct dso *dso)
{
	return dso ? RC_CHK_ACCESS(dso) : NULL;
}

/* pprof's mapping of a frame: the map it was found in, the dso's build id */
static int export_frame__set_map(struct export_frame *f, struct map *map)
{
	struct dso *dso = map__dso(map);
	char bid[SBUILD_ID_SIZE];

	f->map_start = map__start(map);
	f->map_end = map__end(map);
	f->map_pgoff = map__pgoff(map);
	if (!dso__has_build_id(dso))
		return 0;
	build_id__snprintf(dso__bid(dso), bid, sizeof(bid));
	f->build_id = strdup(bid);
	return f->build_id ? 0 : -ENOMEM;
}

/*
 * The frame of @key: its id in @id, and @f NULL, when it is known; else @f
 * a new frame, zeroed, that the caller fills and then registers with
 * export__add_frame().
 */
static int export__find_frame(struct export_stacks *es, u32 hash, const struct frame_key *key,
			      u32 *id, struct export_frame **f)
{
	int err;

	*f = NULL;
	if (id_table__find(&es->frame_ids, hash, frame__match, es, key, id))
		return 0;
	err = export__grow32(&es->frames, &es->alloc_frames, sizeof(*es->frames),
			     es->nr_frames + 1);
	if (err)
		return err;
	*f = &es->frames[es->nr_frames];
	memset(*f, 0, sizeof(**f));
	return 0;
}

static int export__add_frame(struct export_stacks *es, u32 hash, u32 *id)
{
	*id = es->nr_frames++;
	return id_table__add(&es->frame_ids, hash, *id);
}

/*
 * The frame of a resolved address @ip: map NULL for none, sym NULL for
 * none; an inlined function's symbol (symbol__inlined()) is the frame of
 * that function of the dso, whatever address it was inlined at.
 */
static int export__frame(struct export_stacks *es, struct map *map, struct symbol *sym,
			 bool kernel, u64 ip, u32 *id)
{
	bool inlined = map && sym && symbol__inlined(sym);
	struct frame_key key = {
		.dso		= map ? export__dso_key(map__dso(map)) : NULL,
		.sym		= map && !inlined ? sym : NULL,
		.inlined	= inlined ? sym->name : NULL,
		.kernel		= kernel,
	};
	u32 hash = export__mix((uintptr_t)key.dso * 31 + (uintptr_t)key.sym * 7 + kernel);
	struct export_frame *f;
	int err;

	if (inlined)
		hash ^= export__hash_bytes(key.inlined, strlen(key.inlined));
	err = export__find_frame(es, hash, &key, id, &f);
	if (err || !f)
		return err;
	f->dso_key = key.dso;
	f->sym_key = key.sym;
	f->kernel = kernel;
	f->addr = ip;
	/* copies: the kernel map's symbols may move while it is loaded */
	if (map && sym) {
		f->name = strdup(sym->name);
		f->inlined = inlined;
		if (!f->name)
			return -ENOMEM;
	}
	if (map) {
		f->dso_name = strdup(dso__name(map__dso(map)));
		if (!f->dso_name || export_frame__set_map(f, map)) {
			zfree(&f->name);
			zfree(&f->dso_name);
			return -ENOMEM;
		}
	}
	return export__add_frame(es, hash, id);
}

/* A frame of ours, that no symbol has: "[off-cpu: S]" */
static int export__named_frame(struct export_stacks *es, const char *name, u32 *id)
{
	struct frame_key key = { .named = name };
	u32 hash = export__hash_bytes(name, strlen(name));
	struct export_frame *f;
	int err;

	err = export__find_frame(es, hash, &key, id, &f);
	if (err || !f)
		return err;
	f->named = true;
	f->name = strdup(name);
	if (!f->name)
		return -ENOMEM;
	return export__add_frame(es, hash, id);
}

static bool addr__match(const struct export_stacks *es, u32 id, const void *key)
{
	const struct export_addr *a = &es->addrs[id], *k = key;

	return a->dso == k->dso && a->addr == k->addr && a->kernel == k->kernel;
}

/*
 * The functions debug info has inlined at @ip of @map, in @sym: perf's
 * list of them for the dso, found or made as append_inlines() in
 * util/machine.c does, kept with the dso.  NULL: none known.
 */
static struct inline_node *export__inline_node(struct map *map, struct symbol *sym, u64 ip)
{
	struct dso *dso = map__dso(map);
	u64 addr = map__rip_2objdump(map, map__dso_map_ip(map, ip));
	struct inline_node *node;

	node = inlines__tree_find(dso__inlined_nodes(dso), addr);
	if (!node) {
		node = dso__parse_addr_inlines(dso, addr, sym);
		if (node)
			inlines__tree_insert(dso__inlined_nodes(dso), node);
	}
	return node;
}

static int export__addr_frame(struct export_stacks *es, u32 frame)
{
	int err = export__grow32(&es->addr_frames, &es->alloc_addr_frames,
				 sizeof(*es->addr_frames), es->nr_addr_frames + 1);

	if (!err)
		es->addr_frames[es->nr_addr_frames++] = frame;
	return err;
}

/*
 * The frames of @ip, found in @map (NULL: none) and @sym (NULL: none),
 * appended to es->addr_frames as add_callchain_ip() appends them to the
 * cursor perf script prints.  With symbol_conf.inline_name (perf's
 * default, off with --no-inline) and functions inlined at the address:
 * perf's list of them, innermost first (perf script prints these
 * "(inlined)"), then the function they are inlined in.  Else the symbol
 * alone.
 */
static int export__ip_frames(struct export_stacks *es, struct map *map, struct symbol *sym,
			     bool kernel, u64 ip)
{
	struct inline_node *node = NULL;
	struct inline_list *ilist;
	u32 first = es->nr_addr_frames, id;
	int err;

	if (symbol_conf.inline_name && map && sym)
		node = export__inline_node(map, sym, ip);
	if (node) {
		list_for_each_entry(ilist, &node->val, list) {
			err = export__frame(es, map, ilist->symbol, kernel, ip, &id);
			if (!err)
				err = export__addr_frame(es, id);
			if (err)
				return err;
		}
	}
	if (es->nr_addr_frames - first > UINT16_MAX)
		return -E2BIG;
	if (es->nr_addr_frames > first)
		return 0;
	err = export__frame(es, map, sym, kernel, ip, &id);
	return err ?: export__addr_frame(es, id);
}

/*
 * The frames of @ip in context @cpumode, as add_callchain_ip() finds them
 * for perf script: the map of the thread (or the kernel), the symbol, the
 * functions inlined there; the symbol and inline searches only on the
 * first sight of the (dso, address).  They are es->addr_frames[*frames ..
 * *frames + *nr), callee first.
 */
static int export__resolve_ip(struct export_stacks *es, struct thread *thread, u8 cpumode,
			      u64 ip, u32 *frames, u32 *nr)
{
	bool kernel = cpumode != PERF_RECORD_MISC_USER && cpumode != PERF_RECORD_MISC_GUEST_USER;
	struct addr_location al;
	struct export_addr key;
	struct map *map;
	u32 hash, id;
	int err = 0;

	/* al holds references to the thread and the map: dropped on the way out */
	addr_location__init(&al);
	map = thread__find_map(thread, cpumode, ip, &al);
	key.dso = map ? export__dso_key(map__dso(map)) : NULL;
	key.addr = map ? al.addr : ip;
	key.kernel = kernel;
	hash = export__mix((uintptr_t)key.dso * 31 + key.addr * 2 + kernel);
	if (id_table__find(&es->addr_ids, hash, addr__match, es, &key, &id)) {
		*frames = es->addrs[id].frames;
		*nr = es->addrs[id].nr_frames;
		goto out;
	}
	key.frames = es->nr_addr_frames;
	err = export__ip_frames(es, map, map ? map__find_symbol(map, al.addr) : NULL, kernel, ip);
	if (err)
		goto out;
	key.nr_frames = es->nr_addr_frames - key.frames;
	err = export__grow32(&es->addrs, &es->alloc_addrs, sizeof(*es->addrs), es->nr_addrs + 1);
	if (err)
		goto out;
	es->addrs[es->nr_addrs] = key;
	err = id_table__add(&es->addr_ids, hash, es->nr_addrs++);
	*frames = key.frames;
	*nr = key.nr_frames;
out:
	addr_location__exit(&al);
	return err;
}

/* ---- one sample's stack ---- */

/*
 * A frame pointer chain already walked in these maps: its stack.  The
 * maps reference keeps the address from being another process' maps
 * while the entry lives.
 */
struct export_chain {
	struct maps	*maps;
	size_t		off;		/* into export_chains.ips */
	u32		nr;
	u32		stack;
};

/*
 * The addresses the chains hold, at most: a recording of ever new chains
 * (deep recursion, many processes) starts afresh there rather than
 * holding all of them.
 */
#define EXPORT_CHAINS_MAX_IPS	(4U << 20)	/* 32 MiB */

/*
 * Most samples repeat a chain an earlier sample of the same process had:
 * its stack is known without resolving a frame.  Only until the maps
 * change: an event that can change what an address resolves to (mmap,
 * fork, exit, comm, ksymbol, ...) makes every entry stale, and the next
 * look-up starts afresh.
 */
struct export_chains {
	struct export_chain	*chains;
	u32			nr, alloc;
	struct export_id_table	ids;
	u64			*ips;
	size_t			nr_ips, alloc_ips;
	bool			stale;
};

struct export_reader {
	struct perf_tool		tool;
	const struct deferred_export_opts *opts;
	struct perf_session		*session;
	struct export_stacks		es;
	struct export_chains		chains;
	struct thread			*root_thread;	/* the last root's thread (a reference) */
	const char			*root_comm;	/* and its comm then */
	u32				root_pid, root_tid;
	u32				root_id;
	struct evsel			*evsel;		/* exported; NULL: not chosen yet */
	struct deferred_export_stats	*stats;
	u32				*scratch;	/* the sample's frames, leaf first */
	size_t				nr_scratch, alloc_scratch;
	char				*root;		/* the sample's root frame */
	size_t				alloc_root;
	/* --count=off-cpu: the switches waiting for their task, the last time */
	struct offcpu_switches		offcpu;
	u64				end_time;
	int				switch_records;	/* --count=wall: -1 not known yet */
	int				err;
};

static int reader__push(struct export_reader *rd, u32 frame)
{
	int err = export__grow(&rd->scratch, &rd->alloc_scratch, sizeof(*rd->scratch),
			       rd->nr_scratch + 1);

	if (!err)
		rd->scratch[rd->nr_scratch++] = frame;
	return err;
}

/* The pseudo-frame perf shows for a deferred user part, from its cursor. */
static int reader__push_deferred(struct export_reader *rd, struct thread *thread,
				 struct perf_sample *sample)
{
	struct callchain_cursor *cursor = get_tls_callchain_cursor();
	struct callchain_cursor_node *node;
	u32 id;
	int err;

	if (!cursor)
		return -ENOMEM;
	callchain_cursor_reset(cursor);
	err = callchain_cursor__append_deferred(cursor, thread, sample);
	if (err)
		return err;
	callchain_cursor_commit(cursor);
	node = callchain_cursor_current(cursor);
	if (!node)
		return 0;	/* perf could not make the pseudo-frame: none shown */
	err = export__frame(&rd->es, node->ms.map, node->ms.sym, false, node->ip, &id);
	return err ?: reader__push(rd, id);
}

/*
 * A frame pointer chain: kernel part, user part, each after its context
 * marker, leaf first; a marker perf does not know discards the chain (perf
 * script then shows no frames); at most max_stack addresses, then the
 * pseudo-frame of a deferred user part if there is room.
 */
static int reader__walk_fp(struct export_reader *rd, struct thread *thread,
			   struct perf_sample *sample)
{
	const struct ip_callchain *chain = sample->callchain;
	bool deferred = callchain__has_deferred_tail(chain);
	u64 i, nr = chain->nr - (deferred ? 2 : 0);
	unsigned int entries = 0;
	u8 cpumode = PERF_RECORD_MISC_USER;
	int err;

	for (i = 0; i < nr && entries < rd->opts->max_stack; i++) {
		u64 ip = chain->ips[i];
		u32 frames, n, f;

		if (ip >= PERF_CONTEXT_MAX) {
			switch (ip) {
			case PERF_CONTEXT_HV:
				cpumode = PERF_RECORD_MISC_HYPERVISOR;
				break;
			case PERF_CONTEXT_KERNEL:
				cpumode = PERF_RECORD_MISC_KERNEL;
				break;
			case PERF_CONTEXT_USER:
				cpumode = PERF_RECORD_MISC_USER;
				break;
			default:
				pr_debug("invalid callchain context: %" PRId64 "\n", (s64)ip);
				rd->nr_scratch = 0;
				return 0;
			}
			continue;
		}
		entries++;
		err = export__resolve_ip(&rd->es,
					 deferred_callchain__ip_thread(sample, thread, cpumode),
					 cpumode, ip, &frames, &n);
		for (f = 0; !err && f < n; f++)
			err = reader__push(rd, rd->es.addr_frames[frames + f]);
		if (err)
			return err;
	}
	if (deferred && entries < rd->opts->max_stack)
		return reader__push_deferred(rd, thread, sample);
	return 0;
}

/*
 * Anything else perf resolves itself (DWARF unwinding, LBR call stacks).
 * Returns 1 when perf cannot resolve the chain: perf script then prints
 * the sample without a callchain, no frame lines and no empty line after
 * its header; stackcollapse-perf.pl drops it at the next header (or gives
 * it the frames of a following sample of an event it filters out, which
 * is not copied here): the sample is left out.
 */
static int reader__walk_cursor(struct export_reader *rd, struct thread *thread,
			       struct perf_sample *sample, struct machine *machine)
{
	struct callchain_cursor *cursor = get_tls_callchain_cursor();
	struct callchain_cursor_node *node;
	int err;

	if (!cursor)
		return -ENOMEM;
	if (thread__resolve_callchain(thread, cursor, sample, NULL, NULL, rd->opts->max_stack))
		return 1;
	callchain_cursor_commit(cursor);
	while ((node = callchain_cursor_current(cursor))) {
		struct map *map = node->ms.map;
		bool kernel = map ? dso__kernel(map__dso(map)) != DSO_SPACE__USER :
				    machine__kernel_ip(machine, node->ip);
		u32 id;

		err = export__frame(&rd->es, map, node->ms.sym, kernel, node->ip, &id);
		if (!err)
			err = reader__push(rd, id);
		if (err)
			return err;
		callchain_cursor_advance(cursor);
	}
	return 0;
}

/* DWARF user stacks and LBR call stacks: perf resolves them (reader__walk_cursor()) */
static bool evsel__walks_cursor(struct evsel *evsel)
{
	return evsel__has_branch_callstack(evsel) ||
	       (evsel->core.attr.sample_type & PERF_SAMPLE_STACK_USER);
}

/*
 * The sample's stack, leaf first, into rd->scratch: 0, 1 when perf script
 * prints the sample without its callchain (reader__walk_cursor()), or
 * -errno.  Only samples with a callchain come here (reader__sample()).
 */
static int reader__walk(struct export_reader *rd, struct addr_location *al,
			struct perf_sample *sample, struct machine *machine)
{
	rd->nr_scratch = 0;
	if (evsel__walks_cursor(sample->evsel))
		return reader__walk_cursor(rd, al->thread, sample, machine);
	return reader__walk_fp(rd, al->thread, sample);
}

static bool stack__match(const struct export_stacks *es, u32 id, const void *key)
{
	const struct export_reader *rd = key;
	const struct export_stack *s = &es->stacks[id];

	/* an empty stack has no frames array to compare (memcmp() of NULL) */
	return s->len == rd->nr_scratch &&
	       (!s->len || !memcmp(es->stack_frames + s->off, rd->scratch, s->len * sizeof(u32)));
}

static int reader__intern_stack(struct export_reader *rd, u32 *id)
{
	struct export_stacks *es = &rd->es;
	u32 hash = export__hash_bytes(rd->scratch, rd->nr_scratch * sizeof(u32));
	int err;

	if (id_table__find(&es->stack_ids, hash, stack__match, es, rd, id))
		return 0;
	err = export__grow32(&es->stacks, &es->alloc_stacks, sizeof(*es->stacks),
			     es->nr_stacks + 1);
	if (!err)
		err = export__grow(&es->stack_frames, &es->alloc_stack_frames, sizeof(u32),
				   es->nr_stack_frames + rd->nr_scratch);
	if (err)
		return err;
	/* an empty stack (perf discarded the chain) has no arrays yet */
	if (rd->nr_scratch)
		memcpy(es->stack_frames + es->nr_stack_frames, rd->scratch,
		       rd->nr_scratch * sizeof(u32));
	es->stacks[es->nr_stacks].off = es->nr_stack_frames;
	es->stacks[es->nr_stacks].len = rd->nr_scratch;
	es->nr_stack_frames += rd->nr_scratch;
	*id = es->nr_stacks++;
	return id_table__add(&es->stack_ids, hash, *id);
}

/* ---- chains already walked ---- */

struct export_chain_key {
	const struct export_chains	*chains;
	struct maps			*maps;
	const struct ip_callchain	*chain;
};

/* the pid: the threads of a process share their maps */
static u32 chain__hash(const struct ip_callchain *chain, u32 pid)
{
	u64 h = (u64)pid * 0x9e3779b97f4a7c15ULL;
	u64 i;

	for (i = 0; i < chain->nr; i++)
		h = (h ^ chain->ips[i]) * 0x100000001b3ULL;
	return export__mix(h ^ chain->nr);
}

static bool chain__match(const struct export_stacks *es __maybe_unused, u32 id,
			 const void *key)
{
	const struct export_chain_key *k = key;
	const struct export_chain *c = &k->chains->chains[id];

	return c->nr == k->chain->nr && maps__equal(c->maps, k->maps) &&
	       (!c->nr || !memcmp(k->chains->ips + c->off, k->chain->ips, c->nr * sizeof(u64)));
}

static void export_chains__clear(struct export_chains *c)
{
	u32 i;

	for (i = 0; i < c->nr; i++)
		maps__put(c->chains[i].maps);
	hashmap__clear(&c->ids.map);
	c->nr = 0;
	c->nr_ips = 0;
	c->stale = false;
}

static void export_chains__exit(struct export_chains *c)
{
	export_chains__clear(c);
	free(c->chains);
	free(c->ips);
}

static int export_chains__add(struct export_chains *c, u32 hash,
			      const struct export_chain_key *key, u32 stack)
{
	u64 nr = key->chain->nr;
	int err = export__grow32(&c->chains, &c->alloc, sizeof(*c->chains), c->nr + 1);

	if (!err)
		err = export__grow(&c->ips, &c->alloc_ips, sizeof(*c->ips), c->nr_ips + nr);
	if (err)
		return err;
	if (nr)
		memcpy(c->ips + c->nr_ips, key->chain->ips, nr * sizeof(*c->ips));
	c->chains[c->nr].maps = maps__get(key->maps);
	c->chains[c->nr].off = c->nr_ips;
	c->chains[c->nr].nr = nr;
	c->chains[c->nr].stack = stack;
	c->nr_ips += nr;
	return id_table__add(&c->ids, hash, c->nr++);
}

/*
 * The sample's stack id into *stack: 0, 1 when perf script prints the
 * sample without its callchain, or -errno.  A frame pointer chain seen
 * in the same maps since they last changed is not walked again; a chain
 * with a deferred tail is (its pseudo-frame tells the sample's fate), and
 * so is one whose user part resolves in the maps of its record's time.
 */
static int reader__stack(struct export_reader *rd, struct addr_location *al,
			 struct perf_sample *sample, struct machine *machine, u32 *stack)
{
	struct export_chains *c = &rd->chains;
	struct export_chain_key key = {
		.chains	= c,
		.maps	= thread__maps(al->thread),
		.chain	= sample->callchain,
	};
	bool cached = false;
	u32 hash = 0, id;
	int err;

	/* a user part in the maps of its record's time: not those of the key */
	if (key.maps && !evsel__walks_cursor(sample->evsel) &&
	    !callchain__has_deferred_tail(key.chain) &&
	    !(sample->deferred && sample->deferred->user_thread)) {
		if (c->stale || c->nr_ips + key.chain->nr > EXPORT_CHAINS_MAX_IPS)
			export_chains__clear(c);
		hash = chain__hash(key.chain, sample->pid);
		if (id_table__find(&c->ids, hash, chain__match, &rd->es, &key, &id)) {
			*stack = c->chains[id].stack;
			return 0;
		}
		cached = true;
	}
	err = reader__walk(rd, al, sample, machine);
	if (!err)
		err = reader__intern_stack(rd, stack);
	if (err || !cached)
		return err;
	return export_chains__add(c, hash, &key, *stack);
}

/*
 * perf's processing of an event that can change what an address
 * resolves to (maps, threads, kernel symbols) or a thread's comm: the
 * chains walked so far are stale, and so is the last root frame.
 */
static int reader__maps_event(const struct perf_tool *tool, union perf_event *event,
			      struct perf_sample *sample, struct machine *machine)
{
	struct export_reader *rd = container_of(tool, struct export_reader, tool);

	rd->chains.stale = true;
	thread__zput(rd->root_thread);
	return perf_event__process(tool, event, sample, machine);
}

/* ---- folded: counts per (root frame, stack) ---- */

static bool root__match(const struct export_stacks *es, u32 id, const void *key)
{
	return !strcmp(es->roots[id], key);
}

/* rd->root interned in es->roots */
static int reader__intern_root(struct export_reader *rd, u32 *id)
{
	struct export_stacks *es = &rd->es;
	u32 hash;
	int err;

	hash = export__hash_bytes(rd->root, strlen(rd->root));
	if (id_table__find(&es->root_ids, hash, root__match, es, rd->root, id))
		return 0;
	err = export__grow32(&es->roots, &es->alloc_roots, sizeof(*es->roots), es->nr_roots + 1);
	if (err)
		return err;
	es->roots[es->nr_roots] = strdup(rd->root);
	if (!es->roots[es->nr_roots])
		return -ENOMEM;
	*id = es->nr_roots++;
	return id_table__add(&es->root_ids, hash, *id);
}

/*
 * The root frame as stackcollapse-perf.pl makes it: the comm, with --pid
 * "-PID", with --tid "-PID/TID", spaces turned into '_' (and ';', which
 * would split the frame, into ':').
 */
static int reader__root(struct export_reader *rd, struct thread *thread,
			struct perf_sample *sample, u32 *id)
{
	const char *comm = thread__comm_str(thread);
	size_t len;
	char *p;
	int err;

	/* the thread of the last sample, still its comm: the same root */
	if (thread == rd->root_thread && comm == rd->root_comm &&
	    sample->pid == rd->root_pid && sample->tid == rd->root_tid) {
		*id = rd->root_id;
		return 0;
	}
	thread__put(rd->root_thread);
	rd->root_thread = thread__get(thread);
	rd->root_comm = comm;
	rd->root_pid = sample->pid;
	rd->root_tid = sample->tid;
	comm = comm ?: ":-1";
	len = strlen(comm) + 32;
	err = export__grow(&rd->root, &rd->alloc_root, 1, len);
	if (err)
		return err;
	if (rd->opts->tid)
		snprintf(rd->root, len, "%s-%d/%d", comm, sample->pid, sample->tid);
	else if (rd->opts->pid)
		snprintf(rd->root, len, "%s-%d", comm, sample->pid);
	else
		snprintf(rd->root, len, "%s", comm);
	for (p = rd->root; *p; p++) {
		if (*p == ' ')
			*p = '_';
		else if (*p == ';')
			*p = ':';
	}
	err = reader__intern_root(rd, &rd->root_id);
	if (err)
		thread__zput(rd->root_thread);	/* nothing known to reuse */
	*id = rd->root_id;
	return err;
}

/* pprof: the comm at the sample, as perf script shows it, interned in es->roots */
static int reader__comm(struct export_reader *rd, struct thread *thread, u32 *id)
{
	const char *comm = thread__comm_str(thread) ?: ":-1";
	int err = export__grow(&rd->root, &rd->alloc_root, 1, strlen(comm) + 1);

	if (err)
		return err;
	strcpy(rd->root, comm);
	return reader__intern_root(rd, id);
}

static bool count__match(const struct export_stacks *es, u32 id, const void *key)
{
	const struct export_count *c = &es->counts[id], *k = key;

	return c->root == k->root && c->stack == k->stack;
}

static int reader__count(struct export_reader *rd, u32 root, u32 stack, u64 weight)
{
	struct export_stacks *es = &rd->es;
	struct export_count key = { .root = root, .stack = stack, .count = weight };
	u32 hash = export__mix((u64)root << 32 | stack), id;
	int err;

	if (id_table__find(&es->count_ids, hash, count__match, es, &key, &id)) {
		es->counts[id].count += weight;
		return 0;
	}
	err = export__grow32(&es->counts, &es->alloc_counts, sizeof(*es->counts),
			     es->nr_counts + 1);
	if (err)
		return err;
	es->counts[es->nr_counts] = key;
	return id_table__add(&es->count_ids, hash, es->nr_counts++);
}

/* ---- speedscope: runs of samples per thread ---- */

static bool thread__match(const struct export_stacks *es, u32 id, const void *key)
{
	const struct export_thread *t = &es->threads[id];
	const struct perf_sample *sample = key;

	return t->pid == (int)sample->pid && t->tid == (int)sample->tid;
}

/*
 * The sample's thread, by pid and tid.  It is named after the input is
 * read (export_stacks__name_threads()), so a reference to perf's thread of
 * its latest sample is kept (a tid reused in the same pid: the later
 * thread).
 */
static int reader__thread(struct export_reader *rd, struct thread *thread,
			  struct perf_sample *sample, u32 *id)
{
	struct export_stacks *es = &rd->es;
	u32 hash = export__mix((u64)sample->pid << 32 | sample->tid);
	struct export_thread *t;
	int err;

	if (id_table__find(&es->thread_ids, hash, thread__match, es, sample, id)) {
		t = &es->threads[*id];
		if (!RC_CHK_EQUAL(t->thread, thread)) {
			thread__put(t->thread);
			t->thread = thread__get(thread);
		}
		return 0;
	}
	err = export__grow32(&es->threads, &es->alloc_threads, sizeof(*es->threads),
			     es->nr_threads + 1);
	if (err)
		return err;
	t = &es->threads[es->nr_threads];
	memset(t, 0, sizeof(*t));
	t->pid = sample->pid;
	t->tid = sample->tid;
	t->thread = thread__get(thread);
	*id = es->nr_threads++;
	return id_table__add(&es->thread_ids, hash, *id);
}

/*
 * A speedscope profile has one name for a thread, whose comm may change
 * while it runs: a thread naming itself (prctl(PR_SET_NAME),
 * pthread_setname_np()) or an exec.  The comm of its first sample would
 * depend on whether the thread was sampled before it renamed itself; the
 * name is the one perf gives the thread at the end of the input,
 * thread__comm_str(), its last comm (as 'perf report --sort pid' shows a
 * thread).  Folded stacks and pprof's comm label, like perf script, show
 * the comm at each sample.
 */
static int export_stacks__name_threads(struct export_stacks *es)
{
	u32 i;

	for (i = 0; i < es->nr_threads; i++) {
		struct export_thread *t = &es->threads[i];

		t->comm = strdup(thread__comm_str(t->thread) ?: ":-1");
		if (!t->comm)
			return -ENOMEM;
		thread__zput(t->thread);
	}
	return 0;
}

/* perf's threads go with the session: references dropped before it is deleted */
static void export_stacks__put_threads(struct export_stacks *es)
{
	u32 i;

	for (i = 0; i < es->nr_threads; i++)
		thread__zput(es->threads[i].thread);
}

static int reader__run_add(struct export_reader *rd, u32 thread, u32 stack, u64 weight)
{
	struct export_thread *t = &rd->es.threads[thread];
	struct export_run *run;
	int err;

	t->samples++;
	t->weight += weight;
	run = t->nr_runs ? &t->runs[t->nr_runs - 1] : NULL;
	if (run && run->stack == stack && run->count < UINT32_MAX) {
		run->count++;
		run->weight += weight;
		return 0;
	}
	err = export__grow32(&t->runs, &t->alloc_runs, sizeof(*t->runs), t->nr_runs + 1);
	if (err)
		return err;
	t->runs[t->nr_runs].stack = stack;
	t->runs[t->nr_runs].count = 1;
	t->runs[t->nr_runs].weight = weight;
	t->nr_runs++;
	return 0;
}

static int reader__run(struct export_reader *rd, struct thread *thread,
		       struct perf_sample *sample, u32 stack, u64 weight)
{
	u32 id;
	int err = reader__thread(rd, thread, sample, &id);

	return err ?: reader__run_add(rd, id, stack, weight);
}

/* ---- how a sample's user part came ---- */

static u32 reader__status(const struct perf_sample *sample)
{
	const struct deferred_sample_info *info = sample->deferred;
	int r;

	if (!info)
		return EXPORT_STATUS__NOT_DEFERRED;
	switch (info->status) {
	case DEFERRED_SAMPLE__STITCHED:
		return EXPORT_STATUS__STITCHED;
	case DEFERRED_SAMPLE__ORPHAN:
		r = info->reason > 0 && info->reason < DEFERRED_STITCH_REASONS_MAX ?
		    info->reason : 0;
		return EXPORT_STATUS__ORPHAN + r;
	case DEFERRED_SAMPLE__UNSTITCHED:
	default:
		return EXPORT_STATUS__UNSTITCHED;
	}
}

/* ---- pprof: samples per (stack, thread, stitch status) ---- */

static bool pprof__match(const struct export_stacks *es, u32 id, const void *key)
{
	const struct export_pprof_sample *s = &es->pprof[id], *k = key;

	return s->stack == k->stack && s->thread == k->thread && s->comm == k->comm &&
	       s->status == k->status;
}

/* @key: one sample (samples 1) of its weight */
static int reader__pprof_add(struct export_reader *rd, const struct export_pprof_sample *key)
{
	struct export_stacks *es = &rd->es;
	u32 hash, id;
	int err;

	hash = export__mix((u64)key->stack << 32 | (key->thread * 64 + key->status)) ^
	       export__mix(key->comm);
	if (id_table__find(&es->pprof_ids, hash, pprof__match, es, key, &id)) {
		es->pprof[id].samples += key->samples;
		es->pprof[id].weight += key->weight;
		return 0;
	}
	err = export__grow32(&es->pprof, &es->alloc_pprof, sizeof(*es->pprof), es->nr_pprof + 1);
	if (err)
		return err;
	es->pprof[es->nr_pprof] = *key;
	return id_table__add(&es->pprof_ids, hash, es->nr_pprof++);
}

static int reader__pprof(struct export_reader *rd, struct thread *thread,
			 struct perf_sample *sample, u32 stack, u64 weight)
{
	struct export_pprof_sample key = { .stack = stack, .samples = 1, .weight = weight };
	int err;

	err = reader__thread(rd, thread, sample, &key.thread);
	if (!err)
		err = reader__comm(rd, thread, &key.comm);
	if (err)
		return err;
	key.status = reader__status(sample);
	return reader__pprof_add(rd, &key);
}

/* ---- the tool ---- */

/*
 * Which samples: those perf script prints with a callchain, as
 * stackcollapse-perf.pl takes them.  perf script prints a sample's
 * callchain (a line break after the header, a line per frame, an empty
 * line) when its event samples callchains (PERF_SAMPLE_CALLCHAIN) and
 * perf resolves the chain, to no frame at all maybe (a chain of context
 * markers only, or one perf discards): then the header and the empty
 * line, which the script folds into the root frame alone.  A sample of an
 * event without callchains is one line, its comm right-aligned in 16
 * columns (perf_sample__fprintf_start(): "%16s"); a comm has at most 15
 * characters, so the line starts with a blank, and the script's header
 * test wants a line that starts with the comm: the line is taken for a
 * frame line (it ends in "(dso)" when perf script prints the ip) while no
 * sample is open and ignored, or warned about as "Unrecognized line".
 * Nothing of it is kept, nor is its event seen: an event without
 * callchains is never the one chosen by default.  The same samples are
 * left out of every format.
 */

/*
 * stackcollapse-perf.pl reads the header line perf script prints for a
 * sample: with a period and an event name at its end ("... 250000
 * cpu-clock:"), the period is the sample's weight and the event can be
 * filtered; by default only the first such event is kept.  Where text
 * follows the event name (a tracepoint's fields; the address, data source
 * and weight perf script prints for raw events that sample them), the
 * line is never filtered out, and weighs 1.
 */
static bool evsel__header_ends_in_event(struct evsel *evsel)
{
	const u64 raw_fields = PERF_SAMPLE_ADDR | PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_WEIGHT |
			       PERF_SAMPLE_WEIGHT_STRUCT | PERF_SAMPLE_PHYS_ADDR |
			       PERF_SAMPLE_DATA_PAGE_SIZE | PERF_SAMPLE_CODE_PAGE_SIZE;
	const struct perf_event_attr *attr = &evsel->core.attr;

	if (attr->type == PERF_TYPE_TRACEPOINT)
		return false;
	return attr->type != PERF_TYPE_RAW || !(attr->sample_type & raw_fields);
}

/*
 * The sample's period as stackcollapse-perf.pl weighs it: the one perf
 * script prints, sample->period.  A sample without PERF_SAMPLE_PERIOD has
 * the attr's sample_period there (evsel__parse_sample()): the fixed period
 * of 'perf record -c N' or of an event's period=N term, each event its
 * own; in frequency mode (--no-period) the union's sample_freq.
 */
static u64 sample__period_weight(struct evsel *evsel, const struct perf_sample *sample)
{
	if (!evsel__header_ends_in_event(evsel))
		return 1;
	/* a period of 0 (printed as "0") counts 1 in the script too */
	return sample->period ?: 1;
}

/*
 * cpu-clock and task-clock periods count nanoseconds, sampled or fixed;
 * not the frequency a sample without a period has in frequency mode
 */
static bool evsel__period_is_ns(struct evsel *evsel)
{
	const struct perf_event_attr *attr = &evsel->core.attr;

	return evsel__header_ends_in_event(evsel) &&
	       ((attr->sample_type & PERF_SAMPLE_PERIOD) || !attr->freq) &&
	       attr->type == PERF_TYPE_SOFTWARE &&
	       (attr->config == PERF_COUNT_SW_CPU_CLOCK ||
		attr->config == PERF_COUNT_SW_TASK_CLOCK);
}

/*
 * The event exported: --event's, or @first, the first sampled of those
 * stackcollapse-perf.pl filters.  --event is matched when the session's
 * events are known: for a file before reading the data, for a pipe at the
 * first sample (or at the end, one without samples).
 */
static int reader__choose_event(struct export_reader *rd, struct evsel *first)
{
	struct evlist *evlist = rd->session->evlist;
	struct evsel *evsel;

	if (!rd->opts->event) {
		rd->evsel = first;
	} else {
		rd->evsel = NULL;
		evlist__for_each_entry(evlist, evsel) {
			if (!strcmp(evsel__name(evsel), rd->opts->event)) {
				rd->evsel = evsel;
				break;
			}
		}
	}
	if (rd->evsel) {
		snprintf(rd->stats->event, sizeof(rd->stats->event), "%s", evsel__name(rd->evsel));
		return 0;
	}
	pr_err("perf stitch: no event '%s' in %s; it has:", rd->opts->event, rd->opts->input);
	evlist__for_each_entry(evlist, evsel)
		pr_err(" %s", evsel__name(evsel));
	pr_err("\n");
	return -EINVAL;
}

/*
 * Whether @evsel's sample goes into the export: --event's only, or as
 * stackcollapse-perf.pl by default: the first event whose header line it
 * can filter (chosen here), and every event whose line it cannot.
 */
static int reader__keeps(struct export_reader *rd, struct evsel *evsel, bool *keep)
{
	int err = 0;

	if (!rd->opts->event && !evsel__header_ends_in_event(evsel)) {
		*keep = true;
		return 0;
	}
	if (!rd->evsel)
		err = reader__choose_event(rd, evsel);
	*keep = evsel == rd->evsel;
	return err;
}

/* A pipe's attrs: callchains resolved as their sample types say (reader__setup()). */
static int reader__attr(const struct perf_tool *tool, union perf_event *event,
			struct evlist **pevlist)
{
	int err = perf_event__process_attr(tool, event, pevlist);

	if (!err)
		callchain_param_setup(evlist__combined_sample_type(*pevlist),
				      perf_session__e_machine(evlist__session(*pevlist),
							      /*e_flags=*/NULL));
	return err;
}

/* An exported sample, by how its user part came (reader__status()) */
static void reader__count_status(struct export_reader *rd, u32 status)
{
	struct deferred_export_stats *st = rd->stats;

	if (status == EXPORT_STATUS__NOT_DEFERRED)
		return;
	st->deferred++;
	if (status == EXPORT_STATUS__STITCHED) {
		st->stitched++;
	} else if (status == EXPORT_STATUS__UNSTITCHED) {
		st->unstitched++;
	} else {
		st->orphans++;
		st->orphan_reasons[status - EXPORT_STATUS__ORPHAN]++;
	}
}

/*
 * The sample's thread into @al (initialized here), as machine__resolve()
 * finds it; the sample's own address is not looked up: only the chain's
 * frames are exported.  False, said and counted, when there is none.
 */
static bool reader__sample_thread(struct export_reader *rd, struct perf_sample *sample,
				  struct machine *machine, struct addr_location *al)
{
	addr_location__init(al);
	al->thread = machine__findnew_thread(machine, sample->pid, sample->tid);
	if (al->thread)
		return true;
	pr_warning("perf stitch: no thread for the sample of pid %d tid %d at %" PRIu64
		   ", left out\n", sample->pid, sample->tid, sample->time);
	addr_location__exit(al);
	rd->stats->unresolved++;
	return false;
}

/* ---- --count=off-cpu: each switch-out weighs the time its task stays out ---- */

/* sched:sched_switch, or --event's if it is that tracepoint */
static int reader__choose_offcpu_event(struct export_reader *rd)
{
	const char *name = rd->opts->event ?: "sched:sched_switch";
	struct evsel *evsel = evlist__find_evsel_by_str(rd->session->evlist, name);

	if (!evsel || !evsel__is_sched_switch(evsel)) {
		pr_err("perf stitch: --count=off-cpu weighs the samples of sched:sched_switch, and %s has %s (perf record -e sched:sched_switch --call-graph=deferred)\n",
		       rd->opts->input, evsel ? "--event's is another event" : "none");
		return -EINVAL;
	}
	rd->evsel = evsel;
	snprintf(rd->stats->event, sizeof(rd->stats->event), "%s", evsel__name(evsel));
	return 0;
}

/*
 * The switch's stack with the state its task left the CPU in as the leaf:
 * "[off-cpu: S]", or "[off-cpu: S, to the end]" for a task still out when
 * the recording ends.
 */
static int reader__offcpu_stack(struct export_reader *rd, const struct offcpu_switch *sw,
				bool open, u32 *stack)
{
	const struct export_stack *s = &rd->es.stacks[sw->stack];
	char name[32];
	u32 frame;
	int err;

	snprintf(name, sizeof(name), open ? "[off-cpu: %c, to the end]" : "[off-cpu: %c]",
		 sw->state);
	err = export__named_frame(&rd->es, name, &frame);
	if (!err)
		err = export__grow(&rd->scratch, &rd->alloc_scratch, sizeof(*rd->scratch),
				   s->len + 1);
	if (err)
		return err;
	rd->scratch[0] = frame;
	if (s->len)
		memcpy(rd->scratch + 1, rd->es.stack_frames + s->off, s->len * sizeof(u32));
	rd->nr_scratch = s->len + 1;
	return reader__intern_stack(rd, stack);
}

/*
 * @ns on @stack, of @sw's thread: a sample when @sample, else weight alone
 * (a run on CPU that took no clock sample)
 */
static int reader__weigh(struct export_reader *rd, const struct offcpu_switch *sw,
			 u32 stack, u64 ns, bool sample)
{
	struct export_pprof_sample key = {
		.stack = stack, .thread = sw->thread, .comm = sw->comm, .status = sw->status,
		.samples = sample, .weight = ns,
	};
	struct export_stacks *es = &rd->es;
	int err;

	if (rd->opts->format == DEFERRED_EXPORT__FOLDED)
		err = reader__count(rd, sw->root, stack, ns);
	else if (rd->opts->format == DEFERRED_EXPORT__PPROF)
		err = reader__pprof_add(rd, &key);
	else
		err = reader__run_add(rd, sw->thread, stack, ns);
	if (err)
		return err;
	rd->stats->weight += ns;
	if (!sample)
		return 0;
	rd->stats->exported++;
	reader__count_status(rd, sw->status);
	if (!es->weighed || sw->time < es->first_time)
		es->first_time = sw->time;
	if (sw->time > es->last_time)
		es->last_time = sw->time;
	es->weighed++;
	es->weighed_ns++;
	return 0;
}

/* @sw's task was out for @ns: a sample of that weight */
static int reader__offcpu_weigh(struct export_reader *rd, const struct offcpu_switch *sw,
				u64 ns, bool open)
{
	u32 stack;
	int err = reader__offcpu_stack(rd, sw, open, &stack);

	if (!err)
		err = reader__weigh(rd, sw, stack, ns, /*sample=*/true);
	if (!err)
		rd->stats->open_switches += open;
	return err;
}

static int reader__offcpu_open(void *ctx, const struct offcpu_switch *sw)
{
	struct export_reader *rd = ctx;

	return reader__offcpu_weigh(rd, sw, rd->end_time - sw->time, /*open=*/true);
}

/* ---- --count=wall: each run on CPU split among its clock samples ---- */

/*
 * A run ends where the task's time off CPU starts: at its switch-out
 * record when the recording has them (perf record --switch-events, which
 * --off-cpu without BPF turns on), else at the sched_switch sample.
 */
static bool reader__switch_records(struct export_reader *rd)
{
	struct evsel *evsel;

	if (rd->switch_records < 0) {
		rd->switch_records = 0;
		evlist__for_each_entry(rd->session->evlist, evsel)
			rd->switch_records |= evsel->core.attr.context_switch;
	}
	return rd->switch_records;
}

/* @run's waiting sample weighs up to @time */
static int reader__wall_weigh(struct export_reader *rd, struct oncpu_run *run, u64 time)
{
	run->sampled = false;
	return reader__weigh(rd, &run->sample, run->sample.stack,
			     time > run->sample.time ? time - run->sample.time : 0,
			     /*sample=*/true);
}

static int reader__wall_drain(void *ctx, struct oncpu_run *run)
{
	struct export_reader *rd = ctx;

	return reader__wall_weigh(rd, run, rd->end_time);
}

/* @tid switched in at @time */
static int reader__wall_in(struct export_reader *rd, int tid, u64 time)
{
	struct oncpu_run *run;

	if (!rd->opts->wall || tid <= 0)
		return 0;
	run = offcpu_switches__run(&rd->offcpu, tid);
	if (!run)
		return -ENOMEM;
	if (run->running)	/* its sample and its record both say it */
		return 0;
	run->running = true;
	run->since = time;
	return 0;
}

/*
 * @tid switched out at @time: its waiting sample weighs up to here; a run
 * that took none weighs on @sw's stack, the one it left the CPU with.
 */
static int reader__wall_out(struct export_reader *rd, int tid, u64 time,
			    const struct offcpu_switch *sw)
{
	struct oncpu_run *run;
	int err = 0;

	if (!rd->opts->wall || tid <= 0)
		return 0;
	run = offcpu_switches__run(&rd->offcpu, tid);
	if (!run)
		return -ENOMEM;
	if (run->sampled) {
		err = reader__wall_weigh(rd, run, time);
	} else if (run->running && sw && time > run->since) {
		err = reader__weigh(rd, sw, sw->stack, time - run->since, /*sample=*/false);
		rd->stats->unsampled_runs++;
	}
	run->running = false;
	return err;
}

/*
 * A clock sample of a task on CPU: the one waiting weighs up to it, and
 * it waits, from its run's switch-in when it is the run's first (from its
 * period before it when the switch-in is not in the recording).
 */
static int reader__wall_sample(struct export_reader *rd, struct thread *thread,
			       struct perf_sample *sample, u32 stack)
{
	struct oncpu_run *run = offcpu_switches__run(&rd->offcpu, sample->tid);
	struct offcpu_switch *sw;
	u64 period = sample->period;
	int err = 0;

	if (!run)
		return -ENOMEM;
	sw = &run->sample;
	if (run->sampled) {
		err = reader__wall_weigh(rd, run, sample->time);
		sw->time = sample->time;
	} else if (run->running) {
		sw->time = run->since;
	} else {
		sw->time = sample->time - min(period, sample->time);
		run->running = true;
	}
	if (err)
		return err;
	sw->stack = stack;
	sw->status = reader__status(sample);
	if (rd->opts->format == DEFERRED_EXPORT__FOLDED)
		err = reader__root(rd, thread, sample, &sw->root);
	else
		err = reader__thread(rd, thread, sample, &sw->thread);
	if (!err && rd->opts->format == DEFERRED_EXPORT__PPROF)
		err = reader__comm(rd, thread, &sw->comm);
	if (err)
		return err;
	run->sampled = true;
	rd->stats->on_cpu++;
	return 0;
}

/*
 * A task's exit ends its last run: a per-task recording's events are
 * closed before the task's last switch, which no record then says.
 */
static int reader__exit(const struct perf_tool *tool, union perf_event *event,
			struct perf_sample *sample, struct machine *machine)
{
	struct export_reader *rd = container_of(tool, struct export_reader, tool);
	int err = 0;

	if (!rd->err && sample->time != (u64)-1)
		err = reader__wall_out(rd, event->fork.tid, sample->time, NULL);
	if (err) {
		rd->err = err;
		session_done = 1;
		return 0;
	}
	return reader__maps_event(tool, event, sample, machine);
}

/*
 * A switch: the task it switches in (next_pid) comes back, which ends the
 * time it was out; the one it switches out (prev_pid, the sample's task)
 * leaves with the sample's stack, and waits.  The idle task is never
 * "off-CPU", nor is a task that exits.
 */
static int reader__offcpu_sample(struct export_reader *rd, struct perf_sample *sample,
				 struct machine *machine)
{
	struct deferred_export_stats *st = rd->stats;
	struct offcpu_switch sw = { .time = sample->time }, back;
	struct sched_switch_fields f;
	struct addr_location al;
	bool ends_run;
	int err;

	if (!rd->evsel) {
		err = reader__choose_offcpu_event(rd);
		if (err)
			return err;
	}
	if (sample->evsel != rd->evsel) {
		st->other_events++;
		return 0;
	}
	sched_switch__fields(sample, &f);
	if (offcpu_switches__in(&rd->offcpu, f.next_pid, &back)) {
		err = reader__offcpu_weigh(rd, &back, sample->time - back.time, /*open=*/false);
		if (err)
			return err;
	}
	err = reader__wall_in(rd, f.next_pid, sample->time);
	if (err)
		return err;
	/* with switch records, the task's run ends at its own (reader__context_switch()) */
	ends_run = rd->opts->wall && !reader__switch_records(rd);
	switch (sched_switch__out(&f)) {
	case SCHED_SWITCH_OUT__IDLE:
		st->idle_switches++;
		return 0;
	case SCHED_SWITCH_OUT__EXITING:
		st->exiting_switches++;
		return ends_run ? reader__wall_out(rd, f.prev_pid, sample->time, NULL) : 0;
	case SCHED_SWITCH_OUT__WAITS:
	default:
		break;
	}
	if (!sample->callchain) {
		st->no_callchain++;
		return ends_run ? reader__wall_out(rd, f.prev_pid, sample->time, NULL) : 0;
	}
	/*
	 * A task preempted while it exits: the kernel no longer names it in
	 * the sample (tid -1, its pid is gone), the switch's prev_pid does.
	 */
	if (sample->tid == (u32)-1 && f.prev_pid > 0)
		sample->tid = f.prev_pid;
	if (!reader__sample_thread(rd, sample, machine, &al))
		return ends_run ? reader__wall_out(rd, f.prev_pid, sample->time, NULL) : 0;
	err = reader__stack(rd, &al, sample, machine, &sw.stack);
	if (err > 0) {
		st->no_callchain++;
		err = ends_run ? reader__wall_out(rd, f.prev_pid, sample->time, NULL) : 0;
		goto out;
	}
	sw.state = f.prev_state;
	sw.status = reader__status(sample);
	if (!err && rd->opts->format == DEFERRED_EXPORT__FOLDED)
		err = reader__root(rd, al.thread, sample, &sw.root);
	else if (!err)
		err = reader__thread(rd, al.thread, sample, &sw.thread);
	if (!err && rd->opts->format == DEFERRED_EXPORT__PPROF)
		err = reader__comm(rd, al.thread, &sw.comm);
	if (!err && ends_run)
		err = reader__wall_out(rd, f.prev_pid, sample->time, &sw);
	if (!err)
		err = offcpu_switches__out(&rd->offcpu, f.prev_pid, &sw, NULL);
	if (err > 0) {
		/* the one it replaced never saw its task come back */
		st->unmatched_switches++;
		err = 0;
	}
out:
	addr_location__exit(&al);
	return err;
}

/*
 * A switch event (perf record --switch-events, which --off-cpu without BPF
 * turns on).  Switched in: the task comes back, which a per-task recording
 * has no sched_switch sample naming it next_pid for.  Switched out: the
 * switch starts here, after its sched_switch sample, which the task took
 * on CPU (with frame pointer callchains tens of microseconds, as much as
 * the shortest waits).
 */
static int reader__context_switch(const struct perf_tool *tool, union perf_event *event,
				  struct perf_sample *sample, struct machine *machine)
{
	struct export_reader *rd = container_of(tool, struct export_reader, tool);
	struct offcpu_switch back;
	int err;

	if (sample->time != (u64)-1 && sample->time > rd->end_time)
		rd->end_time = sample->time;
	if (rd->err)
		return perf_event__process_switch(tool, event, sample, machine);
	if (event->header.misc & PERF_RECORD_MISC_SWITCH_OUT) {
		offcpu_switches__switched_out(&rd->offcpu, sample->tid, sample->time);
		err = reader__wall_out(rd, sample->tid, sample->time,
				       offcpu_switches__waiting(&rd->offcpu, sample->tid));
	} else {
		err = 0;
		if (offcpu_switches__in(&rd->offcpu, sample->tid, &back))
			err = reader__offcpu_weigh(rd, &back, sample->time - back.time,
						   /*open=*/false);
		if (!err)
			err = reader__wall_in(rd, sample->tid, sample->time);
	}
	if (err) {
		rd->err = err;
		session_done = 1;
		return 0;
	}
	return perf_event__process_switch(tool, event, sample, machine);
}

static int reader__sample(const struct perf_tool *tool, union perf_event *event __maybe_unused,
			  struct perf_sample *sample, struct machine *machine)
{
	struct export_reader *rd = container_of(tool, struct export_reader, tool);
	struct evsel *evsel = sample->evsel;
	struct addr_location al;
	u32 stack, root;
	bool keep;
	u64 weight;
	int err;

	if (rd->err)
		return 0;	/* stopping: see below */
	rd->stats->samples++;
	if (sample->time != (u64)-1 && sample->time > rd->end_time)
		rd->end_time = sample->time;
	/* --count=wall: cpu-clock and task-clock samples go the usual way */
	if (rd->opts->off_cpu && !(rd->opts->wall && evsel__period_is_ns(evsel))) {
		err = reader__offcpu_sample(rd, sample, machine);
		if (err) {
			/* reader__choose_offcpu_event() said why, or deferred_export() will */
			rd->err = err;
			session_done = 1;
		}
		return 0;
	}
	/*
	 * A pipe's events are known once their HEADER_ATTR records came.  No
	 * such event: said once, and reading stops here (the session would
	 * add "failed to process" for the record that flushed this sample).
	 */
	if (!sample->callchain && !rd->opts->event) {
		/* before the event is chosen: not one the script sees */
		rd->stats->no_callchain++;
		return 0;
	}
	keep = rd->opts->wall;
	err = keep ? 0 : reader__keeps(rd, evsel, &keep);
	if (err) {
		rd->err = err;
		session_done = 1;
		return 0;
	}
	if (!keep) {
		rd->stats->other_events++;
		return 0;
	}
	if (!sample->callchain) {
		rd->stats->no_callchain++;
		return 0;
	}
	/* pprof has both: the samples and the periods */
	weight = rd->opts->count_samples && rd->opts->format != DEFERRED_EXPORT__PPROF ? 1 :
		 sample__period_weight(evsel, sample);
	if (!reader__sample_thread(rd, sample, machine, &al))
		return 0;

	err = reader__stack(rd, &al, sample, machine, &stack);
	if (err > 0) {
		addr_location__exit(&al);
		rd->stats->no_callchain++;
		return 0;
	}
	if (!err && rd->opts->wall) {
		/* weighed by its run on CPU, when the next sample or the switch-out comes */
		err = reader__wall_sample(rd, al.thread, sample, stack);
		addr_location__exit(&al);
		if (err)
			rd->err = err;
		return err;
	}
	if (!err && rd->opts->format == DEFERRED_EXPORT__FOLDED) {
		err = reader__root(rd, al.thread, sample, &root);
		if (!err)
			err = reader__count(rd, root, stack, weight);
	} else if (!err && rd->opts->format == DEFERRED_EXPORT__PPROF) {
		err = reader__pprof(rd, al.thread, sample, stack, weight);
	} else if (!err) {
		err = reader__run(rd, al.thread, sample, stack, weight);
	}
	addr_location__exit(&al);
	if (err) {
		rd->err = err;
		return err;
	}
	rd->stats->exported++;
	rd->stats->weight += weight;
	if (!rd->es.weighed || sample->time < rd->es.first_time)
		rd->es.first_time = sample->time;
	if (sample->time > rd->es.last_time)
		rd->es.last_time = sample->time;
	rd->es.weighed++;
	rd->es.weighed_ns += evsel__period_is_ns(evsel);
	if (evsel != rd->evsel)
		rd->stats->unfiltered++;
	reader__count_status(rd, reader__status(sample));
	return 0;
}

static void export_stacks__exit(struct export_stacks *es)
{
	u32 i;

	for (i = 0; i < es->nr_frames; i++) {
		free(es->frames[i].name);
		free(es->frames[i].dso_name);
		free(es->frames[i].build_id);
		free(es->frames[i].folded);
		free(es->frames[i].folded_java);
	}
	for (i = 0; i < es->nr_roots; i++)
		free(es->roots[i]);
	for (i = 0; i < es->nr_threads; i++) {
		free(es->threads[i].comm);
		free(es->threads[i].runs);
	}
	free(es->frames);
	hashmap__clear(&es->frame_ids.map);
	free(es->addrs);
	hashmap__clear(&es->addr_ids.map);
	free(es->addr_frames);
	free(es->stack_frames);
	free(es->stacks);
	hashmap__clear(&es->stack_ids.map);
	free(es->roots);
	hashmap__clear(&es->root_ids.map);
	free(es->counts);
	hashmap__clear(&es->count_ids.map);
	free(es->threads);
	hashmap__clear(&es->thread_ids.map);
	free(es->pprof);
	hashmap__clear(&es->pprof_ids.map);
}

/* ---- the whole run ---- */

int deferred_export(const struct deferred_export_opts *opts, struct deferred_export_stats *stats)
{
	struct perf_data data = {
		.path	= opts->input,
		.mode	= PERF_DATA_MODE_READ,
		.force	= opts->force,
	};
	struct export_reader rd = {
		.opts	= opts,
		.stats	= stats,
	};
	struct stitch_output out = { .fd = -1, .slot = -1 };
	struct callchain_cursor *cursor;
	FILE *fp;
	const char *what = opts->format == DEFERRED_EXPORT__FOLDED ? "folded" :
			   opts->format == DEFERRED_EXPORT__PPROF ? "pprof" : "speedscope";
	bool symbols = false;
	int err;

	perf_tool__init(&rd.tool, /*ordered_events=*/true);
	rd.tool.sample		= reader__sample;
	rd.tool.mmap		= reader__maps_event;
	rd.tool.mmap2		= reader__maps_event;
	rd.tool.comm		= reader__maps_event;
	rd.tool.namespaces	= perf_event__process_namespaces;
	rd.tool.cgroup		= perf_event__process_cgroup;
	rd.tool.exit		= reader__exit;
	rd.tool.fork		= reader__maps_event;
	rd.tool.ksymbol		= reader__maps_event;
	rd.tool.text_poke	= perf_event__process_text_poke;
	rd.tool.attr		= reader__attr;
	rd.tool.event_update	= perf_event__process_event_update;
#ifdef HAVE_LIBTRACEEVENT
	rd.tool.tracing_data	= perf_event__process_tracing_data;
#endif
	rd.tool.build_id	= perf_event__process_build_id;
	rd.tool.id_index	= perf_event__process_id_index;
	rd.tool.feature		= perf_event__process_feature;
	if (opts->off_cpu)
		rd.tool.context_switch = reader__context_switch;
	rd.tool.ordering_requires_timestamps = true;

	memset(stats, 0, sizeof(*stats));
	/* pprof holds both values, --count only picks its default */
	stats->count_samples = opts->count_samples && opts->format != DEFERRED_EXPORT__PPROF;
	stats->off_cpu = opts->off_cpu;
	stats->wall = opts->wall;
	rd.es.opts = opts;
	rd.switch_records = -1;
	if (opts->off_cpu) {
		err = offcpu_switches__init(&rd.offcpu);
		if (err)
			return err;
	}
	/* before the work: a refusal (an existing file, the input) comes first */
	err = stitch_output__open(&out, opts->output, opts->input, opts->force, 0666);
	if (err) {
		offcpu_switches__exit(&rd.offcpu);
		return err;
	}
	fp = stitch_output__fdopen(&out);
	if (!fp) {
		stitch_output__abort(&out);
		offcpu_switches__exit(&rd.offcpu);
		return -ENOMEM;
	}

	/* callchains resolved as perf script resolves them */
	symbol_conf.use_callchain = true;
	callchain_param.order = ORDER_CALLEE;

	rd.session = perf_session__new(&data, &rd.tool);
	if (IS_ERR(rd.session)) {
		/* perf_data__open() said why */
		pr_err("perf stitch -F %s: cannot read %s\n", what, opts->input);
		stitch_output__abort(&out);
		offcpu_switches__exit(&rd.offcpu);
		return PTR_ERR(rd.session) ?: -EINVAL;
	}
	if (zstd_init(&rd.session->zstd_data, 0) < 0)
		pr_warning("perf stitch -F %s: decompression initialization failed\n", what);
	err = symbol__init(perf_session__env(rd.session));
	if (err < 0) {
		pr_err("perf stitch -F %s: cannot set up the symbol tables\n", what);
		goto out;
	}
	symbols = true;
	/*
	 * As perf script: DWARF unwinding of the user stacks, LBR call
	 * stacks, or frame pointers (a pipe's attrs come later: reader__attr())
	 */
	callchain_param_setup(evlist__combined_sample_type(rd.session->evlist),
			      perf_session__e_machine(rd.session, /*e_flags=*/NULL));
	/* a file's events are known: a wrong --event is refused before the work */
	if (!perf_data__is_pipe(&data) && (opts->event || opts->off_cpu)) {
		err = opts->off_cpu ? reader__choose_offcpu_event(&rd) :
		      reader__choose_event(&rd, NULL);
		if (err)
			goto out;
	}

	err = perf_session__process_events(rd.session);
	if (rd.err == -EINVAL && (opts->event || opts->off_cpu) && !rd.evsel) {
		err = rd.err;	/* reader__choose_*event() said why */
		goto out;
	}
	if (rd.err) {
		pr_err("perf stitch -F %s: %s while reading %s\n", what, strerror(-rd.err),
		       opts->input);
		err = rd.err;
		goto out;
	}
	/* perf_session__process_events() said where and in which file */
	if (err)
		goto out;
	err = deferred_stitch__check_cut(rd.session, opts->input, opts->force);
	if (!err)
		err = deferred_stitch__check_read(rd.session, opts->input, stats->samples,
						  opts->force, opts->strict);
	if (err)
		goto out;
	stats->malformed_records = evlist__stats(rd.session->evlist)->nr_invalid_callchain_deferred;
	stats->malformed_samples = evlist__stats(rd.session->evlist)->nr_invalid_deferred_samples;
	if (!stats->samples)
		pr_warning("perf stitch -F %s: no samples in %s\n", what, opts->input);
	else if (!stats->exported && stats->no_callchain)
		pr_warning("perf stitch -F %s: no %s%ssample in %s has a callchain (perf record -g): nothing exported\n",
			   what, opts->event ?: "", opts->event ? " " : "", opts->input);
	if (!err && (opts->event || opts->off_cpu) && !rd.evsel) {
		/* a pipe without samples: its events are known now */
		err = opts->off_cpu ? reader__choose_offcpu_event(&rd) :
		      reader__choose_event(&rd, NULL);
		if (err)
			goto out;
	}
	/* the tasks still out at the end: out until the last sample */
	if (opts->off_cpu) {
		err = offcpu_switches__drain(&rd.offcpu, reader__offcpu_open, &rd) ?:
		      offcpu_switches__drain_runs(&rd.offcpu, reader__wall_drain, &rd);
		if (err) {
			pr_err("perf stitch -F %s: not enough memory\n", what);
			goto out;
		}
	}

	if (opts->format == DEFERRED_EXPORT__SPEEDSCOPE) {
		err = export_stacks__name_threads(&rd.es);
		if (err) {
			pr_err("perf stitch -F %s: not enough memory\n", what);
			goto out;
		}
	}
	stats->frames = rd.es.nr_frames;
	stats->stacks = rd.es.nr_stacks;
	if (opts->format == DEFERRED_EXPORT__FOLDED)
		err = export_stacks__write_folded(&rd.es, fp, stats);
	else if (opts->format == DEFERRED_EXPORT__PPROF)
		err = export_stacks__write_pprof(&rd.es, fp, stats);
	else
		err = export_stacks__write_speedscope(&rd.es, fp, opts->input, stats);
	if (err == -ENOMEM)
		pr_err("perf stitch -F %s: not enough memory\n", what);
	if (!err)
		err = stitch_output__commit(&out);
out:
	if (err)
		stitch_output__abort(&out);
	/* the cursor's last chain holds references to the session's maps and threads */
	cursor = get_tls_callchain_cursor();
	if (cursor)
		callchain_cursor_reset(cursor);
	export_stacks__put_threads(&rd.es);
	export_chains__exit(&rd.chains);
	thread__zput(rd.root_thread);
	zstd_fini(&rd.session->zstd_data);
	perf_session__delete(rd.session);
	if (symbols)
		symbol__exit();
	export_stacks__exit(&rd.es);
	offcpu_switches__exit(&rd.offcpu);
	free(rd.scratch);
	free(rd.root);
	return err;
}

void deferred_export__fprintf_stats(const struct deferred_export_stats *st, FILE *fp,
				    const char *prefix)
{
	u64 named = st->exported - st->unfiltered;

	if (st->wall) {
		fprintf(fp, "%s: %" PRIu64 " %s samples (off CPU) and %" PRIu64
			" cpu-clock or task-clock samples (on CPU) exported", prefix,
			st->exported - st->on_cpu, st->event, st->on_cpu);
	} else if (!named && st->unfiltered) {
		/* a recording of tracepoints only: all of them, none of a named event */
		fprintf(fp, "%s: %" PRIu64 " samples exported, all of events with fields after their name (tracepoints: kept, as stackcollapse-perf.pl keeps them)",
			prefix, st->unfiltered);
	} else {
		fprintf(fp, "%s: %" PRIu64 " %s%ssamples exported", prefix, named, st->event,
			st->event[0] ? " " : "");
		if (st->unfiltered)
			fprintf(fp, ", and %" PRIu64 " of events with fields after their name (tracepoints: kept, as stackcollapse-perf.pl keeps them)",
				st->unfiltered);
	}
	if (st->deferred) {
		fprintf(fp, " (%" PRIu64 " deferred: %" PRIu64 " stitched, %" PRIu64 " orphans",
			st->deferred, st->stitched, st->orphans);
		deferred_stitch__fprintf_orphans(fp, st->orphan_reasons,
						 DEFERRED_STITCH_REASONS_MAX);
		if (st->unstitched)
			fprintf(fp, ", %" PRIu64 " not stitched", st->unstitched);
		fprintf(fp, ")");
	}
	fprintf(fp, ", total weight %" PRIu64 " (%s), %" PRIu64 " stacks, %" PRIu64 " frames",
		st->weight, st->wall ? "ns on and off CPU" : st->off_cpu ? "ns off-CPU" :
		st->count_samples ? "samples" : "periods",
		st->stacks, st->frames);
	if (st->open_switches)
		fprintf(fp, "; %" PRIu64 " tasks still off-CPU at the end, weighed to the last sample",
			st->open_switches);
	if (st->unsampled_runs)
		fprintf(fp, "; %" PRIu64 " runs on CPU without a clock sample, weighed on the stack they switched out with",
			st->unsampled_runs);
	if (st->idle_switches || st->exiting_switches)
		fprintf(fp, "; %" PRIu64 " switches of the idle task and %" PRIu64
			" of exiting tasks left out", st->idle_switches, st->exiting_switches);
	if (st->unmatched_switches)
		fprintf(fp, "; %" PRIu64 " switches left out, their task switched out again before a recorded switch-in",
			st->unmatched_switches);
	if (st->other_events)
		fprintf(fp, "; %" PRIu64 " samples of other events left out (--event)",
			st->other_events);
	if (st->no_callchain)
		fprintf(fp, "; %" PRIu64 " samples without a callchain left out (as stackcollapse-perf.pl)",
			st->no_callchain);
	if (st->unresolved)
		fprintf(fp, "; %" PRIu64 " samples without a thread left out", st->unresolved);
	deferred_stitch__fprintf_malformed(fp, "; ", st->malformed_records, st->malformed_samples);
	fprintf(fp, "\n");
}
