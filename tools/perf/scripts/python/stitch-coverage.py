# SPDX-License-Identifier: GPL-2.0
#
# stitch-coverage.py: how many deferred user callchains perf stitched,
# per thread.
#
# Usage:
#     perf script report stitch-coverage [-i perf.data]
#     perf script -s stitch-coverage.py [-i perf.data]
#
# A file recorded with --call-graph deferred (Linux 6.19+) has samples whose
# user callchain comes later, in a PERF_RECORD_CALLCHAIN_DEFERRED record.
# perf joins them while reading the file and gives every such sample a
# "deferred" entry (see perf-script-python(1)): status "stitched", "orphan"
# (reason: why its record never came, e.g. "record_lost") or "unstitched"
# (perf script --no-merge-callchains).  This script counts them per thread (comm and
# tid), one line per thread with deferred samples, then a total line
# (samples: all the thread's samples, deferred or not).

from __future__ import print_function

threads = {}		# (comm, tid) -> Counts
total_samples = 0


class Counts(object):
	def __init__(self):
		self.samples = 0
		self.deferred = 0
		self.stitched = 0
		self.unstitched = 0
		self.orphans = {}	# reason -> count

	def add(self, other):
		self.samples += other.samples
		self.deferred += other.deferred
		self.stitched += other.stitched
		self.unstitched += other.unstitched
		for reason, n in other.orphans.items():
			self.orphans[reason] = self.orphans.get(reason, 0) + n


def trace_begin():
	pass


def process_event(param_dict):
	global total_samples

	sample = param_dict.get('sample', {})
	key = (param_dict.get('comm', '?'), sample.get('tid', -1))
	c = threads.get(key)
	if c is None:
		c = threads[key] = Counts()
	c.samples += 1
	total_samples += 1

	deferred = param_dict.get('deferred')
	if deferred is None:
		return
	c.deferred += 1
	status = deferred['status']
	if status == 'stitched':
		c.stitched += 1
	elif status == 'orphan':
		reason = deferred['reason'] or 'unknown'
		c.orphans[reason] = c.orphans.get(reason, 0) + 1
	else:
		c.unstitched += 1


def trace_unhandled(event_name, context, event_fields_dict, perf_sample_dict):
	process_event(perf_sample_dict)


def percent(n, d):
	if not d:
		return '-'
	return '%.1f%%' % (100.0 * n / d)


def orphan_text(c):
	n = sum(c.orphans.values())
	if not n:
		return '0'
	return '%d (%s)' % (n, ', '.join('%s %d' % (r, c.orphans[r])
					   for r in sorted(c.orphans)))


def row(comm, tid, c):
	line = '%-16s %7s %8d %8d %8d %8s  %s' % (
		comm, tid, c.samples, c.deferred, c.stitched,
		percent(c.stitched, c.deferred), orphan_text(c))
	if c.unstitched:
		line += ', %d unstitched' % c.unstitched
	return line


def trace_end():
	total = Counts()
	for c in threads.values():
		total.add(c)
	if not total.deferred:
		print('stitch coverage: no deferred user callchains (%d samples)' %
		      total_samples)
		return

	print('%-16s %7s %8s %8s %8s %8s  %s' % ('comm', 'tid', 'samples', 'deferred',
						 'stitched', '%', 'orphans'))
	keys = [k for k in threads if threads[k].deferred]
	keys.sort(key=lambda k: (-threads[k].deferred, k[0], k[1]))
	for k in keys:
		print(row(k[0], k[1], threads[k]))
	print(row('total', '', total))
