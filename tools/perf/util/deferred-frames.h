/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The pseudo-frames of deferred user callchains, in their own map
 * "[deferred]": "[user stack lost: <reason>]" for an orphan, "[user stack
 * deferred]" where the user part was not stitched in.
 */
#ifndef __PERF_DEFERRED_FRAMES_H
#define __PERF_DEFERRED_FRAMES_H

#include <stdbool.h>

struct callchain_cursor;
struct map_symbol;
struct perf_sample;
struct thread;

/*
 * On: a frame per cookie, to find the record of an unstitched sample (perf
 * script). Off (default): one for all, so that histograms aggregate.
 */
void deferred_callchain__cookie_frames(bool on);
/*
 * The chain ends in PERF_CONTEXT_USER_DEFERRED, cookie: the pseudo-frame
 * for it goes to @cursor: "[user stack lost: <reason>]" for an orphan,
 * else "[user stack deferred]", or with deferred_callchain__cookie_frames()
 * on "[user stack deferred: cookie 0x...]" (the cookie is then also the
 * frame's address; for the first 65536 cookies).
 */
int callchain_cursor__append_deferred(struct callchain_cursor *cursor, struct thread *thread,
				      const struct perf_sample *sample);
/*
 * The same pseudo-frame as @ms (its map and symbol; not referenced), for
 * the tools that print a chain without a cursor (perf data convert
 * --to-json); false when there is none.
 */
bool deferred_callchain__pseudo_frame(struct thread *thread, const struct perf_sample *sample,
				      struct map_symbol *ms);

#endif /* __PERF_DEFERRED_FRAMES_H */
