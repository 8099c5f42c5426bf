// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The public headers from C++, as hotspot's perfparser uses them: they
 * compile as C++ and declare C linkage, so a C++ program links against
 * the library (without extern "C" this does not link: the names would be
 * mangled).  One sample, its record, and the stitched chain back.
 */
#include <unwind-cookie/callchain.h>
#include <unwind-cookie/cookie.h>
#include <unwind-cookie/core.h>
#include <unwind-cookie/kmodel.h>
#include <unwind-cookie/stitcher.h>

#include <cstdio>
#include <cstring>
#include <vector>

namespace {
const uint64_t CONTEXT_KERNEL = static_cast<uint64_t>(-128);
const uint64_t CONTEXT_USER_DEFERRED = static_cast<uint64_t>(-640);

int failed;

void expect(bool ok, const char *what)
{
	std::printf("%s - %s\n", ok ? "ok  " : "FAIL", what);
	failed += !ok;
}

struct Delivered {
	std::vector<uint64_t> user;
	unwind_stitch_status status = UNWIND_STITCH_NOT_DEFERRED;
	int count = 0;
};

void deliver(void *ctx, const unwind_stitched_sample *s)
{
	auto d = static_cast<Delivered *>(ctx);

	d->status = s->status;
	d->user.assign(s->user, s->user + s->nr_user);
	d->count++;
}
}

int main()
{
	uint64_t cookie = 0;
	const uint64_t chain[] = { CONTEXT_KERNEL, 0xffffffff81000010ull, 0xffffffff81000020ull,
				   CONTEXT_USER_DEFERRED, 0 };
	const uint64_t user[] = { 0x401000, 0x401100, 0 };
	unwind_callchain_split split = {};
	Delivered got;

	expect(libunwind_cookie_version() && *libunwind_cookie_version(), "libunwind_cookie_version()");
	expect(!unwind_cookie__encode(UNWIND_COOKIE_LAYOUT_MERGED_LE, 1, 7, &cookie) && cookie,
	       "unwind_cookie__encode()");

	std::vector<uint64_t> ips(chain, chain + 5);
	ips[4] = cookie;
	expect(!unwind_callchain__split(ips.data(), ips.size(), &split) && split.deferred &&
		       split.cookie == cookie && split.nr_kernel == 3,
	       "unwind_callchain__split() of a deferred chain");

	unwind_stitcher_opts opts = {};
	opts.sz = sizeof(opts);
	opts.deliver = deliver;
	opts.ctx = &got;
	unwind_stitcher *st = unwind_stitcher__new(&opts);
	expect(st != nullptr, "unwind_stitcher__new()");
	if (!st)
		return 1;

	unwind_stitcher_sample sample = {};
	sample.sz = sizeof(sample);
	sample.pid = sample.tid = 42;
	sample.time = 1000;
	sample.kernel = split.kernel;
	sample.nr_kernel = split.nr_kernel;
	sample.cookie = split.cookie;
	expect(!unwind_stitcher__add_sample(st, &sample), "add_sample()");

	unwind_stitcher_record record = {};
	record.sz = sizeof(record);
	record.pid = record.tid = 42;
	record.cpu = UNWIND_STITCHER_CPU_UNKNOWN;
	record.time = 2000;
	record.cookie = cookie;
	record.ips = user;
	record.nr = 3;
	expect(!unwind_stitcher__add_record(st, &record), "add_record()");
	expect(!unwind_stitcher__finish(st), "finish()");
	expect(got.count == 1 && got.status == UNWIND_STITCH_STITCHED,
	       "the sample comes back stitched, once");
	expect(got.user == std::vector<uint64_t>(user, user + 3),
	       "with the record's user part, its 0 kept");
	unwind_stitcher__delete(st);

	unwind_kmodel_opts kopts = {};
	kopts.sz = sizeof(kopts);
	kopts.nr_cpus = 1;
	unwind_kmodel *km = unwind_kmodel__new(&kopts);
	expect(km != nullptr, "unwind_kmodel__new()");
	unwind_kmodel__delete(km);

	std::printf("%d failed\n", failed);
	return failed ? 1 : 0;
}
