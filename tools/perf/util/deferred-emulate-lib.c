// SPDX-License-Identifier: GPL-2.0
/*
 * The parts of libunwind-cookie (tools/lib/unwind-cookie, LGPL-2.1 OR
 * BSD-2-Clause) that the deferred callchain emulation uses: the cookie, the
 * callchain helpers and the kernel model, compiled into perf.
 *
 * Temporary: once perf links the whole library (LIBUNWIND_COOKIE_CFLAGS and
 * EXTRA_PERFLIBS, "perf build: Build deferred-callchain.o with
 * libunwind-cookie"), this file and its lines in util/Build go away.  Until
 * then util/Build leaves it out when EXTRA_PERFLIBS names
 * libunwind-cookie.a: perf links that with --whole-archive, and the
 * symbols would be defined twice.
 *
 * The sources are found through LIBUNWIND_COOKIE_CFLAGS, -I<lib>/include:
 * the path names the library's own directory so that nothing else in perf's
 * include path can match.
 */
#include "../../unwind-cookie/cookie.c"
/* both define these, the same way */
#undef SEED_COUNTER_MASK
#undef SEED_MAX_CPUS
#include "../../unwind-cookie/kmodel.c"
#include "../../unwind-cookie/callchain.c"
