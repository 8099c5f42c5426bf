// SPDX-License-Identifier: GPL-2.0
//
// Validates a speedscope file against the file format schema shipped in
// the speedscope npm package, with ajv (both from node_modules/, installed
// by `make node-deps`), and prints each sample's frames for the caller to
// compare with perf script.
//
// usage: node speedscope-check.js NODE_MODULES FILE
//   exit 0: valid; stdout: one line per sample, "TID<tab>WEIGHT<tab>frame;..."
//           (root first, frame = name, the profile name ends in " TID")
//   exit 1: invalid (ajv's errors on stderr) or unreadable
'use strict';

const fs = require('fs');
const path = require('path');

const [modules, file] = process.argv.slice(2);
if (!modules || !file) {
	console.error('usage: node speedscope-check.js NODE_MODULES FILE');
	process.exit(2);
}
const Ajv = require(path.join(modules, 'ajv'));
const schema = JSON.parse(fs.readFileSync(path.join(modules,
	'speedscope/dist/release/file-format-schema.json'), 'utf8'));

let doc;
try {
	doc = JSON.parse(fs.readFileSync(file, 'utf8'));
} catch (e) {
	console.error(`${file}: not JSON: ${e.message}`);
	process.exit(1);
}
const ajv = new Ajv({ allErrors: true, strict: false });
const validate = ajv.compile(schema);
if (!validate(doc)) {
	for (const err of validate.errors)
		console.error(`${file}: ${err.instancePath || '/'} ${err.message}`);
	process.exit(1);
}

// What the schema cannot say: frame indexes in range, one weight per sample.
const frames = doc.shared.frames;
let bad = 0;
const out = [];
for (const p of doc.profiles) {
	const tid = p.name.split(' ').pop();
	if (p.samples.length !== p.weights.length) {
		console.error(`${file}: profile ${p.name}: ${p.samples.length} samples, ` +
			      `${p.weights.length} weights`);
		bad++;
	}
	p.samples.forEach((s, i) => {
		for (const f of s) {
			if (!Number.isInteger(f) || f < 0 || f >= frames.length) {
				console.error(`${file}: profile ${p.name}: frame ${f} out of range`);
				bad++;
			}
		}
		out.push(tid + '\t' + p.weights[i] + '\t' +
			 s.map((f) => frames[f] ? frames[f].name : '?').join(';'));
	});
}
if (bad)
	process.exit(1);
process.stdout.write(out.join('\n') + (out.length ? '\n' : ''));
