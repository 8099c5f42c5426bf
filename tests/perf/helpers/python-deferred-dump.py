# SPDX-License-Identifier: GPL-2.0
# perf script -s python-deferred-dump.py: one "S" line per sample (event,
# tid, cpu, time and its "deferred" entry, or "-"), then one "  F" line per
# callchain entry (ip, symbol, dso), tracepoint samples included.  Used by
# test-python.sh and oracle-check.sh, also with the
# system perf (no "deferred" entry) for the reference.


def fmt(v):
	if v is None:
		return 'None'
	if isinstance(v, bool):
		return 'True' if v else 'False'
	if isinstance(v, int):
		return '%#x' % v if v > 0xffff else '%d' % v
	return str(v)


def process_event(d):
	s = d['sample']
	df = d.get('deferred')
	if df is None:
		dtext = '-'
	else:
		dtext = ' '.join('%s=%s' % (k, fmt(df[k])) for k in sorted(df))
	print('S %s %s %d %d %d %s' % (d['ev_name'], d['comm'], s['tid'], s['cpu'],
				      s['time'], dtext))
	for f in d.get('callchain', []):
		sym = f.get('sym')
		name = sym['name'] if sym else '?'
		print('  F %#x %s %s' % (f['ip'], name, f.get('dso', '?')))


# Tracepoint samples come here (no per-event handler is defined): the same
# line for them, from their sample dict.
def trace_unhandled(event_name, context, event_fields_dict, perf_sample_dict):
	process_event(perf_sample_dict)
