// SPDX-License-Identifier: GPL-2.0
//
// Opens a speedscope file in the speedscope app itself (the npm package's
// dist/release/index.html) in headless Chromium and writes down what the
// app shows, for speedscope-app-check.py to compare with the file
// (tests/perf/test-demo.sh).
//
// The app loads a profile given as #profileURL=... with fetch(), and
// only from an http(s) page (from file:// it alerts "Cannot load a
// profile URL when loading from "file:" URL protocol", and a headless
// browser waits on the alert), so this script serves the release
// directory and the profile on 127.0.0.1, on a port the kernel picks, for
// as long as it runs.  It drives Chromium through the DevTools protocol
// on a pipe (--remote-debugging-pipe: no port, no WebSocket, no npm
// package), and ends the browser's process group and the server on every
// way out (the browser also quits when the pipe closes).  No title= is
// passed: the app would give every profile that name and hide the thread
// names.
//
// It reads, for every profile (thread) in the app's order:
//   - the toolbar's "NAME (i/N)" (and, once, the app's profile list);
//   - the Sandwich view's table, all of its rows (the app draws only the
//     rows in sight: the table is scrolled through): Total, Self, Symbol
//     Name and the file the app gives as the name's tooltip;
//   - the Left Heavy flame chart (WebGL: no text in the DOM): a
//     screenshot, and, frame row by frame row (the app's rows are 20 px)
//     down its left edge, what the app's hover tooltip says of the frame
//     under the mouse: the heaviest stack, root first, each frame
//     [name, file, weight, percent] as the app prints them, with where
//     the column is in the chart;
//   - for each FUNC in the table: its row selected (a click), the same
//     of the two charts the app then draws, FUNC's callers (up to the
//     root) and its callees (into the kernel, when stitched).
// At most MAX_ROWS frames per column.
//
// usage: node speedscope-app.js RELEASE_DIR PROFILE OUTDIR [FUNC...]
//   Environment: CHROMIUM (default: chromium), SPEEDSCOPE_TIMEOUT (seconds,
//   default 120).
//   Writes OUTDIR/app.json (what the app showed), OUTDIR/profile-I.png
//   (the Left Heavy view of profile I, 1200x800), OUTDIR/chromium.log.
//   exit 0: the app showed the profile; 1: it did not (the reason on
//   stderr; app.json says what was seen until then); 2: usage.
'use strict';

const fs = require('fs');
const http = require('http');
const path = require('path');
const { spawn } = require('child_process');

const [release, profile, outdir, ...funcs] = process.argv.slice(2);
if (!release || !profile || !outdir) {
	console.error('usage: node speedscope-app.js RELEASE_DIR PROFILE OUTDIR [FUNC...]');
	process.exit(2);
}
const CHROMIUM = process.env.CHROMIUM || 'chromium';
const TIMEOUT = 1000 * (Number(process.env.SPEEDSCOPE_TIMEOUT) || 120);
const WIDTH = 1200, HEIGHT = 800, FRAME_HEIGHT = 20;
const PROFILE_PATH = '/' + path.basename(profile);
const MAX_ROWS = 16;
const started = Date.now();

const seen = {
	url: null, document_title: null, dialogs: [], exceptions: [], requests: [],
	shown: null, profile_list: [], profiles: [], max_rows: MAX_ROWS, hovers: 0, seconds: null,
};
let server = null, browser = null;

function cleanup() {
	if (browser && browser.exitCode === null && browser.signalCode === null) {
		try {
			process.kill(-browser.pid, 'SIGKILL');	// its process group
		} catch (e) {
			// gone already
		}
	}
	if (server)
		server.close();
}
function save() {
	seen.seconds = (Date.now() - started) / 1000;
	fs.writeFileSync(path.join(outdir, 'app.json'), JSON.stringify(seen, null, 1) + '\n');
}
function fail(why) {
	console.error(`speedscope-app: ${why}`);
	save();
	cleanup();
	process.exit(1);
}
process.on('exit', cleanup);
process.on('SIGINT', () => fail('interrupted'));
process.on('SIGTERM', () => fail('terminated'));
const timer = setTimeout(() => fail(`no result in ${TIMEOUT / 1000} s`), TIMEOUT);

// ---------------------------------------------------------------- server
const TYPES = {
	'.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css',
	'.json': 'application/json', '.png': 'image/png', '.ico': 'image/x-icon',
	'.woff2': 'font/woff2', '.wasm': 'application/wasm', '.txt': 'text/plain',
};
function serve(req, res) {
	const url = new URL(req.url, 'http://127.0.0.1');
	const name = decodeURIComponent(url.pathname);
	let file = null;
	if (name === PROFILE_PATH)
		file = profile;
	else if (!name.split('/').includes('..'))
		file = path.join(release, name === '/' ? 'index.html' : name);
	fs.readFile(file || '', (err, data) => {
		const status = err ? 404 : 200;
		seen.requests.push([req.method, name, status]);
		res.writeHead(status, { 'Content-Type': TYPES[path.extname(file || '')] ||
				       'application/octet-stream', 'Cache-Control': 'no-store' });
		res.end(err ? '' : data);
	});
}

// ---------------------------------------------------------------- DevTools protocol
let cdpWrite = null, nextId = 0, session = null;
const pending = new Map();
const listeners = [];
function cdpStart(readable, writable) {
	let buf = Buffer.alloc(0);
	cdpWrite = writable;
	readable.on('data', (chunk) => {
		buf = Buffer.concat([buf, chunk]);
		let end;
		while ((end = buf.indexOf(0)) >= 0) {
			const msg = JSON.parse(buf.subarray(0, end).toString('utf8'));
			buf = buf.subarray(end + 1);
			if (msg.id !== undefined && pending.has(msg.id)) {
				const { resolve, reject, method } = pending.get(msg.id);
				pending.delete(msg.id);
				if (msg.error)
					reject(new Error(`${method}: ${msg.error.message}`));
				else
					resolve(msg.result);
			} else if (msg.method) {
				for (const fn of listeners)
					fn(msg);
			}
		}
	});
}
function send(method, params = {}, sessionId = session) {
	return new Promise((resolve, reject) => {
		const id = ++nextId;
		pending.set(id, { resolve, reject, method });
		const msg = { id, method, params };
		if (sessionId)
			msg.sessionId = sessionId;
		cdpWrite.write(JSON.stringify(msg) + '\0');
	});
}
async function evaluate(expression) {
	const r = await send('Runtime.evaluate', { expression, returnByValue: true, awaitPromise: true });
	if (r.exceptionDetails)
		throw new Error(`page: ${r.exceptionDetails.text} in ${expression.slice(0, 80)}`);
	return r.result.value;
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
// until PRED(value of EXPR) or MS milliseconds
async function until(expr, pred, ms, what) {
	const end = Date.now() + ms;
	for (;;) {
		const v = await evaluate(expr);
		if (pred(v))
			return v;
		if (Date.now() > end)
			fail(`${what}: not in ${ms / 1000} s (last: ${JSON.stringify(v)})`);
		await sleep(50);
	}
}
// two animation frames: what the last state change draws is on screen
const settle = () =>
	evaluate('new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))');
// KEY: a character (the app's shortcuts are keypress events) or Escape
async function press(key) {
	if (key === 'Escape') {
		const k = { key, code: key, windowsVirtualKeyCode: 27 };
		await send('Input.dispatchKeyEvent', { type: 'rawKeyDown', ...k });
		await send('Input.dispatchKeyEvent', { type: 'keyUp', ...k });
	} else {
		// rawKeyDown: a keyDown with text would make a second keypress
		for (const type of ['rawKeyDown', 'char', 'keyUp'])
			await send('Input.dispatchKeyEvent',
				   type === 'keyUp' ? { type, key } : { type, key, text: key });
	}
	await settle();
}
async function mouse(x, y, type = 'mouseMoved') {
	const move = type === 'mouseMoved';
	await send('Input.dispatchMouseEvent',
		   { type, x, y, button: move ? 'none' : 'left', clickCount: move ? 0 : 1 });
}

// ---------------------------------------------------------------- what the app shows
// the toolbar's middle: "NAME (i/N)", where (i/N) is its own element
const TOOLBAR = `(() => {
	for (const el of document.querySelectorAll('div, span')) {
		const m = /^\\((\\d+)\\/(\\d+)\\)$/.exec(el.textContent.trim());
		if (m && el.children.length === 0)
			return { text: el.parentElement.textContent.trim(), i: +m[1], n: +m[2] };
	}
	return null;
})()`;

// the visible rows of the Sandwich table, and how to scroll it: the rows
// sit in a div sized to all of them (height: rows x 20 px) inside a
// scrolled div
// Each row comes with its place in the whole table (px from its top): two
// frames of the same name and file can have the same weights, and then
// the same text.
const TABLE = `(() => {
	const trs = [];
	let box = null;
	for (const tr of document.querySelectorAll('tr')) {
		const td = tr.querySelectorAll('td');
		// not the rows of the profile list (they have a title)
		if (td.length !== 3 || tr.closest('thead') || tr.hasAttribute('title'))
			continue;
		trs.push([tr, td]);
		for (let el = tr.parentElement; el && !box; el = el.parentElement)
			if (el.scrollHeight > el.clientHeight + 1 || getComputedStyle(el).overflowY === 'auto')
				box = el;
	}
	const top = box ? box.getBoundingClientRect().top - box.scrollTop : 0;
	const rows = trs.map(([tr, td]) =>
		[td[0].firstChild ? td[0].firstChild.textContent : '',
		 td[1].firstChild ? td[1].firstChild.textContent : '',
		 td[2].textContent, td[2].getAttribute('title'),
		 Math.round(tr.getBoundingClientRect().top - top)]);
	const sized = box && box.firstElementChild;
	return { rows, scrollTop: box ? box.scrollTop : 0, clientHeight: box ? box.clientHeight : 0,
		 height: sized ? parseFloat(sized.style.height) || 0 : 0,
		 header: /Symbol Name/.test(document.body.innerText) };
})()`;
const scrollTable = (top) => evaluate(`(() => {
	for (const tr of document.querySelectorAll('tr:not([title])')) {
		if (tr.closest('thead'))
			continue;
		for (let el = tr.parentElement; el; el = el.parentElement)
			if (el.scrollHeight > el.clientHeight + 1) { el.scrollTop = ${top}; return el.scrollTop; }
	}
	return 0;
})()`);

async function readTable() {
	const rows = [];
	const keys = new Set();
	let t = await until(TABLE, (v) => v.header && v.rows.length > 0, 10000, 'Sandwich table');
	const expected = Math.round(t.height / FRAME_HEIGHT);
	for (let top = 0; ; top += Math.max(FRAME_HEIGHT, t.clientHeight - 2 * FRAME_HEIGHT)) {
		await scrollTable(top);
		await settle();
		t = await evaluate(TABLE);
		for (const r of t.rows) {
			const y = r.pop();	// the row's place: the same text may come twice
			if (!keys.has(y)) {
				keys.add(y);
				rows.push(r);
			}
		}
		if (top + t.clientHeight >= t.height || t.clientHeight === 0)
			break;
	}
	await scrollTable(0);
	return { rows, rows_declared: expected };
}

// The hover tooltip over a flame chart (a WebGL canvas, no text in the
// DOM): a div placed at the mouse (style left, top) holding
// <div><span>WEIGHT (PERCENT)</span> NAME<div>FILE:LINE</div></div>.
// [name, file, weight, percent], or null without one; read once the page
// has seen the mouse at X, Y (MOUSE_SEEN: Chromium may hold a mouse move
// back to the next animation frame).
const MOUSE_SEEN = `addEventListener('mousemove',
	(e) => { window.mouseSeen = [e.clientX, e.clientY]; }, true)`;
const tooltip = (x, y) => `(async () => {
	const at = () => window.mouseSeen && Math.abs(mouseSeen[0] - ${x}) < 1 &&
		Math.abs(mouseSeen[1] - ${y}) < 1;
	for (let i = 0; i < 50 && !at(); i++)
		await new Promise((r) => requestAnimationFrame(r));
	if (!at())
		throw new Error('the mouse move to ${x}, ${y} never came');
	for (const span of document.querySelectorAll('div[style] > div > span:first-child')) {
		const m = /^(\\S+) \\(([^)]*%)\\)$/.exec(span.textContent);
		if (!m)
			continue;
		let name = '';
		for (const n of span.parentElement.childNodes)
			if (n.nodeType === Node.TEXT_NODE)
				name += n.textContent;
		const file = span.parentElement.querySelector('div');
		return [name.trim(), file ? file.textContent.replace(/:\\d*$/, '') : '', m[1], m[2]];
	}
	return null;
})()`;
async function tooltipAt(x, y) {
	await mouse(x, y);
	seen.hovers++;
	return evaluate(tooltip(x, y));
}

// The frames of a flame chart at column X, root first: down (STEP 20)
// or up (STEP -20, an inverted chart) from the first frame found from Y
// on, looking SEARCH px at most for it, 8 px at a time (a 20 px row
// cannot be missed); at most MAX_ROWS frames.  { y: where the first
// frame was found (within 8 px of its edge), offset: X from the left of
// the chart's canvas, width: the canvas', frames }
async function column(x, y, step, search) {
	const frames = [];
	const dir = Math.sign(step);
	let at = null, first = null;
	for (let d = 0; d <= search && at === null; d += 8) {
		const tip = await tooltipAt(x, y + dir * d);
		if (tip) {
			frames.push(tip);
			first = y + dir * d;
			// less than 8 px into the first row: 6 px further is
			// well inside it, and 20 px further inside the next
			at = y + dir * (d + 6);
		}
	}
	for (at = at === null ? null : at + step;
	     at !== null && at > 0 && at < HEIGHT && frames.length < MAX_ROWS; at += step) {
		const tip = await tooltipAt(x, at);
		if (!tip)
			break;
		frames.push(tip);
	}
	// the chart's canvas there: where in the chart the column is
	const box = first === null ? null : await evaluate(`(() => {
		const el = document.elementFromPoint(${x}, ${first});
		const r = el && el.tagName === 'CANVAS' ? el.getBoundingClientRect() : null;
		return r && [r.left, r.width];
	})()`);
	await mouse(WIDTH - 1, 5);
	return { y: first, offset: box ? x - box[0] : null, width: box ? box[1] : null, frames };
}

// the canvas next to the label "Callers" or "Callees" of the Sandwich view
const panel = (label) => `(() => {
	for (const el of document.querySelectorAll('div'))
		if (el.textContent === '${label}' && el.children.length === 0) {
			let box = el;
			while (box && !box.querySelector('canvas'))
				box = box.parentElement;
			const r = box && box.querySelector('canvas').getBoundingClientRect();
			return r && r.width > 0 ? [r.left, r.top, r.right, r.bottom] : null;
		}
	return null;
})()`;

// Select FUNC's row (NAME, FILE) of the Sandwich table and read the
// leftmost column of the two flame charts the app then draws for it:
// its callers (inverted: FUNC at the bottom, the root at the top) and
// its callees (FUNC at the top).  Both FUNC first.
async function sandwich(name, file) {
	const want = JSON.stringify([name, file]);
	let found = null;
	for (let top = 0; top < 1e6 && !found; top += 200) {
		const got = await scrollTable(top);
		await settle();
		found = await evaluate(`(() => {
			const [name, file] = ${want};
			for (const tr of document.querySelectorAll('tr')) {
				const td = tr.querySelectorAll('td');
				if (td.length === 3 && td[2].textContent === name &&
				    (td[2].getAttribute('title') || '') === file) {
					const r = td[2].getBoundingClientRect();
					if (r.top >= 0 && r.bottom <= innerHeight)
						return [r.left + 30, r.top + r.height / 2];
				}
			}
			return null;
		})()`);
		if (got < top)
			break;		// at the end
	}
	if (!found)
		return null;
	await mouse(found[0], found[1], 'mousePressed');
	await mouse(found[0], found[1], 'mouseReleased');
	await settle();
	const callers = await until(panel('Callers'), (v) => v !== null, 10000, `${name}: Callers`);
	const callees = await until(panel('Callees'), (v) => v !== null, 10000, `${name}: Callees`);
	const x = Math.round(callers[0]) + 4;
	const result = {
		callers: await column(x, Math.floor(callers[3]) - 2, -FRAME_HEIGHT,
				      Math.floor(callers[3] - callers[1])),
		callees: await column(x, Math.ceil(callees[1]) + 2, FRAME_HEIGHT,
				      Math.floor(callees[3] - callees[1])),
	};
	await press('Escape');		// the app's way to deselect
	await scrollTable(0);
	return result;
}

// Software WebGL redraws the whole chart on every mouse move: the app is
// driven at devicePixelRatio HOVER_DPR (a quarter of the pixels, the
// same CSS layout, hit testing and tooltips) and photographed at 1.
const HOVER_DPR = 0.5;
async function viewport(dpr) {
	await send('Emulation.setDeviceMetricsOverride',
		   { width: WIDTH, height: HEIGHT, deviceScaleFactor: dpr, mobile: false });
	// the app sizes its canvases on a resize event, which a new ratio
	// alone does not fire
	await evaluate('dispatchEvent(new Event(\'resize\'))');
	await until(`[...document.querySelectorAll('canvas')].every((c) =>
		Math.abs(c.width - c.getBoundingClientRect().width * ${dpr}) <= 1)`,
		    (v) => v, 10000, `canvases at devicePixelRatio ${dpr}`);
	await settle();
}
async function screenshot(file) {
	await viewport(1);
	const shot = await send('Page.captureScreenshot', { format: 'png' });
	fs.writeFileSync(file, Buffer.from(shot.data, 'base64'));
	await viewport(HOVER_DPR);
}

async function main(port) {
	const base = `http://127.0.0.1:${port}`;
	// a fresh profile directory: nothing cached, nothing from another run
	const userData = fs.mkdtempSync(path.join(outdir, 'chromium-profile.'));
	const log = fs.openSync(path.join(outdir, 'chromium.log'), 'w');
	browser = spawn(CHROMIUM, [
		'--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
		'--disable-background-networking', '--disable-component-update', '--disable-sync',
		`--user-data-dir=${userData}`, `--window-size=${WIDTH},${HEIGHT}`,
		// host names fail to resolve: the app loads from 127.0.0.1 only
		'--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
		'--remote-debugging-pipe', 'about:blank',
	], { stdio: ['ignore', log, log, 'pipe', 'pipe'], detached: true });
	browser.on('error', (e) => fail(`${CHROMIUM}: ${e.message}`));
	browser.on('exit', (code, sig) => {
		if (!finished)
			fail(`${CHROMIUM} exited (${sig || code}); see ${outdir}/chromium.log`);
	});
	cdpStart(browser.stdio[4], browser.stdio[3]);

	const { targetId } = await send('Target.createTarget', { url: 'about:blank' }, null);
	session = (await send('Target.attachToTarget', { targetId, flatten: true }, null)).sessionId;
	listeners.push((msg) => {
		if (msg.sessionId !== session)
			return;
		if (msg.method === 'Page.javascriptDialogOpening') {
			// the app's import errors are alert()s
			seen.dialogs.push(msg.params.message);
			send('Page.handleJavaScriptDialog', { accept: true }).catch(() => {});
		} else if (msg.method === 'Inspector.detached' || msg.method === 'Inspector.targetCrashed') {
			fail(`the page is gone (${msg.method}); see ${outdir}/chromium.log`);
		} else if (msg.method === 'Runtime.exceptionThrown') {
			const d = msg.params.exceptionDetails;
			seen.exceptions.push(d.exception ? d.exception.description : d.text);
		}
	});
	await send('Page.enable');
	await send('Runtime.enable');
	await send('Inspector.enable');
	await viewport(HOVER_DPR);

	seen.url = `${base}/index.html#profileURL=${encodeURIComponent(base + PROFILE_PATH)}` +
		'&view=sandwich';
	await send('Page.navigate', { url: seen.url });
	// imported: the app sets the title to "NAME - speedscope"; an import
	// error is an alert() instead
	const end = Date.now() + 30000;
	for (;;) {
		if (seen.dialogs.length)
			fail(`the app said: ${seen.dialogs.join(' / ')}`);
		seen.document_title = await evaluate('document.title').catch(() => null);
		if (/ - speedscope$/.test(seen.document_title || ''))
			break;
		if (Date.now() > end)
			fail(`no profile loaded in 30 s (title "${seen.document_title}")`);
		await sleep(50);
	}
	seen.shown = await until(TOOLBAR, (v) => v !== null, 10000, 'the toolbar\'s (i/N)');
	await evaluate(MOUSE_SEEN);

	// the profile list (a click on the toolbar's name opens it)
	const at = await evaluate(`(() => {
		for (const el of document.querySelectorAll('div, span'))
			if (/^\\(\\d+\\/\\d+\\)$/.test(el.textContent.trim()) && el.children.length === 0) {
				const r = el.parentElement.getBoundingClientRect();
				return [r.x + r.width / 2, r.y + r.height / 2];
			}
		return null;
	})()`);
	if (at) {
		await mouse(at[0], at[1], 'mousePressed');
		await mouse(at[0], at[1], 'mouseReleased');
		await settle();
		seen.profile_list = await evaluate(`[...document.querySelectorAll('tr[title]')]
			.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent))`);
		// closed by a click on the profile shown (Escape leaves it open)
		const row = await evaluate(`(() => {
			for (const tr of document.querySelectorAll('tr[title]'))
				if (tr.firstElementChild.textContent === '${seen.shown.i}') {
					const r = tr.getBoundingClientRect();
					return [r.left + r.width / 2, r.top + r.height / 2];
				}
			return null;
		})()`);
		if (row) {
			await mouse(row[0], row[1], 'mousePressed');
			await mouse(row[0], row[1], 'mouseReleased');
			await settle();
		}
		await until(`(() => {
			const el = document.elementFromPoint(${row ? row[0] : 0}, ${row ? row[1] : 0});
			return !el || !el.closest('tr[title]');
		})()`, (v) => v, 5000, 'the profile list closing');
	}

	// to the first profile, then each in turn ('p' and 'n' in the app)
	for (let i = seen.shown.i; i > 1; i--)
		await press('p');
	for (let i = 1; i <= seen.shown.n; i++) {
		const bar = await until(TOOLBAR, (v) => v && v.i === i, 10000, `profile ${i}`);
		await press('3');
		const table = await readTable();
		await press('2');
		await until(TABLE, (v) => !v.header, 10000, 'Left Heavy view');
		await mouse(WIDTH - 1, 5);
		await settle();
		const png = path.join(outdir, `profile-${i}.png`);
		await screenshot(png);
		// the heaviest stack: Left Heavy puts it at the left edge, in
		// the canvas at the bottom of the page (above it: the minimap)
		const chart = await evaluate(`(() => {
			const el = document.elementFromPoint(3, ${HEIGHT - 5});
			return el && el.tagName === 'CANVAS' ? el.getBoundingClientRect().top : 30;
		})()`);
		const heaviest = await column(3, Math.ceil(chart) + 2, FRAME_HEIGHT, HEIGHT);
		await press('3');
		const selected = {};
		for (const [name, file] of table.rows.map((r) => [r[2], r[3] || '']))
			if (funcs.includes(name))
				selected[name] = await sandwich(name, file);
		seen.profiles.push({ index: i, toolbar: bar.text, table: table.rows,
				     table_rows_declared: table.rows_declared, png, heaviest, selected });
		if (i < seen.shown.n)
			await press('n');
	}
}

let finished = false;
server = http.createServer(serve);
server.on('error', (e) => fail(`server: ${e.message}`));
server.listen(0, '127.0.0.1', () => {
	main(server.address().port).then(() => {
		finished = true;
		clearTimeout(timer);
		save();
		cleanup();
		process.exit(0);
	}, (e) => fail(e.stack || e.message));
});
