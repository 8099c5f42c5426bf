// SPDX-License-Identifier: GPL-2.0
/*
 * The pseudo-frames of deferred user callchains: where a sample's chain
 * still ends in PERF_CONTEXT_USER_DEFERRED, cookie (its record never came,
 * or stitching is off), a frame that says so in place of the user part.
 */
#include <elf.h>
#include <inttypes.h>
#include <stdio.h>
#include <linux/types.h>
#include <perf/event.h>
#include <unwind-cookie/stitcher.h>
#include "callchain.h"
#include "debug.h"
#include "dso.h"
#include "event.h"
#include "map.h"
#include "map_symbol.h"
#include "sample.h"
#include "symbol.h"
#include "deferred-callchain.h"
#include "deferred-frames.h"

/*
 * A map of its own, [deferred], with one symbol per pseudo-frame, so that
 * the frames show by name wherever perf shows symbols (report, script,
 * flame graphs) and sort apart (each at an address of its own, which is
 * also the frame's address):
 *
 *	[user stack lost: <reason>]		0x20 + 0x10 * reason
 *	[user stack deferred: cookie 0x...]	the cookie, for the first
 *						PSEUDO_COOKIE_MAX cookies, when
 *						asked for (perf script)
 *	[user stack deferred]			0x10, for the others
 *
 * Never freed: hist entries and callchain nodes keep pointing to them.
 */
#define PSEUDO_COOKIE_MAX	65536
#define PSEUDO_COOKIE_MIN	0x1000	/* above the fixed frames */

static struct {
	struct dso	*dso;
	struct map	*map;
	struct symbol	*deferred;
	struct symbol	*lost[DEFERRED_ORPHAN__MAX];
	unsigned int	nr_cookies;
	bool		cookies;
	bool		failed;
} pseudo;

void deferred_callchain__cookie_frames(bool on)
{
	pseudo.cookies = on;
}

static bool pseudo__init(void)
{
	if (pseudo.map)
		return true;
	if (pseudo.failed)
		return false;

	pseudo.dso = dso__new("[deferred]");
	if (!pseudo.dso)
		goto fail;
	dso__set_has_srcline(pseudo.dso, false);	/* no file behind it */
	dso__set_loaded(pseudo.dso);
	pseudo.map = map__new2(0, pseudo.dso);
	if (!pseudo.map)
		goto fail;
	return true;
fail:
	pr_err("not enough memory for the deferred callchain pseudo-frames\n");
	pseudo.failed = true;
	return false;
}

static struct symbol *pseudo__symbol(u64 start, const char *name)
{
	struct symbol *sym = symbol__new(start, 1, STB_GLOBAL, STT_FUNC, name);

	if (sym)
		dso__insert_symbol(pseudo.dso, sym);
	return sym;
}

static struct symbol *pseudo__deferred(u64 cookie)
{
	struct symbol *sym;
	char name[64];

	if (cookie >= PSEUDO_COOKIE_MIN && pseudo.cookies) {
		sym = dso__find_symbol(pseudo.dso, cookie);
		if (sym && sym->start == cookie)
			return sym;
		if (pseudo.nr_cookies < PSEUDO_COOKIE_MAX) {
			snprintf(name, sizeof(name), "[user stack deferred: cookie %#" PRIx64 "]",
				 cookie);
			sym = pseudo__symbol(cookie, name);
			if (sym) {
				pseudo.nr_cookies++;
				return sym;
			}
		}
	}
	if (!pseudo.deferred)
		pseudo.deferred = pseudo__symbol(0x10, "[user stack deferred]");
	return pseudo.deferred;
}

static struct symbol *pseudo__lost(int reason)
{
	char name[64];

	if (reason <= UNWIND_ORPHAN_NONE || reason >= DEFERRED_ORPHAN__MAX)
		reason = UNWIND_ORPHAN_NONE;
	if (!pseudo.lost[reason]) {
		snprintf(name, sizeof(name), "[user stack lost: %s]",
			 deferred_stitch__reason_name(reason));
		pseudo.lost[reason] = pseudo__symbol(0x20 + 0x10 * reason, name);
	}
	return pseudo.lost[reason];
}

bool deferred_callchain__pseudo_frame(struct thread *thread, const struct perf_sample *sample,
				      struct map_symbol *ms)
{
	const struct deferred_sample_info *info = sample->deferred;
	const struct ip_callchain *chain = sample->callchain;

	if (!pseudo__init())
		return false;	/* reported once: the frame is left out */
	ms->thread = thread;
	if (info && info->status == DEFERRED_SAMPLE__ORPHAN)
		ms->sym = pseudo__lost(info->reason);
	else
		ms->sym = pseudo__deferred(chain->ips[chain->nr - 1]);
	ms->map = pseudo.map;
	return ms->sym != NULL;
}

int callchain_cursor__append_deferred(struct callchain_cursor *cursor, struct thread *thread,
				      const struct perf_sample *sample)
{
	struct map_symbol ms = { };

	if (!deferred_callchain__pseudo_frame(thread, sample, &ms))
		return 0;
	return callchain_cursor_append(cursor, ms.sym->start, &ms, false, NULL, 0, 0, 0, NULL);
}
