// drive.js - drive Debian's Chromium (headless) through a lockbench report.html
// over the DevTools protocol on a pipe (--remote-debugging-pipe: no port, no
// extra package). Usage:
//   node drive.js REPORT.html SCREENSHOT.png KEYS
// KEYS is a comma list of ArrowRight / ArrowLeft / n / p / z (zoom) / f
// (presenter) / Escape. Prints one JSON object: the page's state after
// loading and after each key (step, time, highlighted sentence, who held the
// lock, the axis's tick labels, whether the step's sentence is in the
// viewport, and every pair of the timeline's text boxes that intersect), the
// script errors the page threw, and writes a screenshot of the final state.
// load_ms is the time from the navigation to the load event (the page's
// script, inline, has drawn by then).
// LOCKBENCH_VIEWPORT=WxH sets the window and the viewport (1500x1100);
// LOCKBENCH_DRIVE_TIMEOUT=S gives up after S seconds (60). The
// test suite checks what it prints (tests/test_browser.c).
'use strict';
const { spawn } = require('child_process');
const fs = require('fs');
const path = require('path');

const [html, shot, keyList] = process.argv.slice(2);
if (!html || !shot) {
	console.error('usage: node drive.js REPORT.html SCREENSHOT.png [KEYS]');
	process.exit(2);
}
const browser = process.env.LOCKBENCH_CHROMIUM || 'chromium';
const [winW, winH] = (/^\d+x\d+$/.test(process.env.LOCKBENCH_VIEWPORT || '') ?
	process.env.LOCKBENCH_VIEWPORT : '1500x1100').split('x').map(Number);
// the profile beside the screenshot: if this script is killed, what it leaves
// is in the caller's own directory
const profile = fs.mkdtempSync(path.join(path.dirname(path.resolve(shot)), 'chromium-profile-'));
const child = spawn(browser, ['--headless=new', '--no-sandbox', '--disable-gpu',
	'--no-first-run', '--remote-debugging-pipe', `--user-data-dir=${profile}`,
	`--window-size=${winW},${winH}`, 'about:blank'],
	// its own process group, so that its helpers (renderer, zygote) can be
	// stopped with it; they go anyway when the pipes close
	{ stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'], detached: true });
let stderr = '';
child.stdio[2].on('data', (d) => { stderr += d; });
const toBrowser = child.stdio[3], fromBrowser = child.stdio[4];
let nextId = 1, buf = Buffer.alloc(0);
const waiting = new Map(), listeners = [];
const errors = [];

// Stop the browser and its helpers, wait until they have exited (they write
// the profile until then), remove the profile and exit with @code.
let finishing = false;
function finish(code) {
	if (finishing) return;
	finishing = true;
	const killGroup = () => { try { process.kill(-child.pid, 'SIGKILL'); } catch (e) { /* gone */ } };
	const remove = (tries) => {
		try {
			fs.rmSync(profile, { recursive: true, force: true });
			process.exit(code);
		} catch (e) { // a helper still writing: it dies with the group
			if (tries <= 0) {
				console.error(`drive.js: cannot remove ${profile}: ${e.message}`);
				process.exit(1);
			}
			killGroup();
			setTimeout(() => remove(tries - 1), 100);
		}
	};
	const done = () => { killGroup(); remove(50); };
	if (child.exitCode !== null || child.signalCode !== null) return done();
	child.once('exit', done);
	killGroup();
}
function fail(msg) {
	console.error(`drive.js: ${msg}\n${stderr.slice(-2000)}`);
	finish(1);
}
const limit = +(process.env.LOCKBENCH_DRIVE_TIMEOUT || 60);
const timer = setTimeout(() => fail(`timed out after ${limit} s`), limit * 1000);
child.on('error', (e) => fail(`cannot start ${browser}: ${e.message}`));
child.on('exit', (code) => { if (waiting.size && !finishing) fail(`${browser} exited (${code})`); });

fromBrowser.on('data', (chunk) => {
	buf = Buffer.concat([buf, chunk]);
	let end;
	while ((end = buf.indexOf(0)) >= 0) {
		const msg = JSON.parse(buf.subarray(0, end).toString('utf8'));
		buf = buf.subarray(end + 1);
		if (msg.id && waiting.has(msg.id)) {
			const { resolve, reject } = waiting.get(msg.id);
			waiting.delete(msg.id);
			if (msg.error) reject(new Error(JSON.stringify(msg.error)));
			else resolve(msg.result);
		} else if (msg.method) {
			if (msg.method === 'Runtime.exceptionThrown')
				errors.push(msg.params.exceptionDetails.exception?.description ||
					msg.params.exceptionDetails.text);
			if (msg.method === 'Log.entryAdded' && msg.params.entry.level === 'error')
				errors.push(msg.params.entry.text);
			listeners.forEach((l) => l(msg));
		}
	}
});

function send(method, params = {}, sessionId) {
	const id = nextId++;
	const msg = { id, method, params };
	if (sessionId) msg.sessionId = sessionId;
	toBrowser.write(JSON.stringify(msg) + '\0');
	return new Promise((resolve, reject) => waiting.set(id, { resolve, reject }));
}
function once(method) {
	return new Promise((resolve) => {
		const l = (msg) => {
			if (msg.method === method) {
				listeners.splice(listeners.indexOf(l), 1);
				resolve(msg.params);
			}
		};
		listeners.push(l);
	});
}

const STATE = `(() => {
	const cur = document.querySelector('#story li.current');
	if (!document.getElementById('pos')) // not a step-through (a matrix's page)
		return JSON.stringify({ title: document.title, hash: location.hash });
	return JSON.stringify({
		pos: document.getElementById('pos').textContent,
		t: document.getElementById('t').textContent,
		inside: +document.getElementById('inside').textContent,
		current: cur ? cur.textContent : null,
		held: [...document.querySelectorAll('#held li')].map((li) => li.textContent),
		cursor_x: +document.getElementById('cursor').getAttribute('x1'),
		steps: document.querySelectorAll('#story li').length,
		// every step as "its time | its text", in the page's order
		story: [...document.querySelectorAll('#story li')].map((li) => li.dataset.t + ' | ' + li.textContent),
		refused_marks: document.querySelectorAll('#tl .mark-refused').length,
		bars: document.querySelectorAll('#tl rect').length,
		blocks: [...document.querySelectorAll('#tl text[font-weight="bold"]')].map((t) => t.textContent),
		lesson: document.getElementById('lpos') ? document.getElementById('lpos').textContent : null,
		ltitle: document.getElementById('ltitle') ? document.getElementById('ltitle').textContent : null,
		hash: location.hash,
		redis: [...document.querySelectorAll('#tl text.redis')].map((t) => t.textContent),
		redis_spans: document.querySelectorAll('#tl .redis-span').length,
		// the legend's swatches (each mark drawn as on the chart), and the
		// colours of the squares beside the lanes' names (a client's colour)
		legend_swatches: document.querySelectorAll('svg.legend > :not(text)').length,
		lane_squares: [...document.querySelectorAll('#tl rect[width="12"]')].map((r) => r.getAttribute('fill')),
		outcomes: [...document.querySelectorAll('#tl text.outcome')].map((t) => t.textContent),
		ticks: [...document.querySelectorAll('#tl text.tick')].map((t) => t.textContent),
		present: document.body.classList.contains('present'),
		now_in_view: (() => { const n = document.getElementById('now');
			const b = n.getBoundingClientRect();
			return b.height > 0 && b.top >= 0 && b.bottom <= innerHeight; })(),
		story_visible: document.getElementById('story').getBoundingClientRect().height > 0,
		fault_labels: document.querySelectorAll('#tl text.fault-label').length,
		overlaps: (() => { const bs = [...document.querySelectorAll('#tl text')]
			.map((t) => [t.textContent, t.getBoundingClientRect()]).filter((b) => b[1].width > 0);
			const o = [];
			for (let i = 0; i < bs.length; i++)
				for (let j = i + 1; j < bs.length; j++) {
					const a = bs[i][1], b = bs[j][1];
					if (Math.min(a.right, b.right) - Math.max(a.left, b.left) > 0.5 &&
					    Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 0.5)
						o.push(bs[i][0] + ' / ' + bs[j][0]);
				}
			return o; })(),
	});
})()`;

// LOCKBENCH_DRIVE_BRIEF=1: each state as one line of words (many steps, a
// small output): the step, the lesson, the kind of step, where the step's
// sentence, the cursor and the chart are against the viewport (1: inside),
// the smallest text and mark of the chart in screen pixels, how many drawn
// sections and marks lie right of the cursor (future) and whether the step is
// its run's last (the whole run is drawn there), the code's lines, whether a
// line is marked as breaking (broken), the speaker notes' height, the chart's
// size in pixels.
const BRIEF = `(() => {
	const r = (e) => e.getBoundingClientRect(), vw = innerWidth, vh = innerHeight;
	const items = [...document.querySelectorAll('#story li')];
	const k = items.findIndex((li) => li.classList.contains('current'));
	const li = items[k], nx = items[k + 1];
	const svg = document.getElementById('tl'), sb = r(svg), cb = r(document.getElementById('cursor'));
	const nb = r(document.getElementById('now'));
	const vb = svg.viewBox.baseVal, px = sb.width / (vb && vb.width ? vb.width : sb.width);
	const texts = [...svg.querySelectorAll('text')].filter((t) => r(t).width > 0);
	const font = Math.min(...texts.map((t) => +t.getAttribute('font-size') * px));
	const marks = [...svg.querySelectorAll('.mark')].map((m) => Math.max(r(m).width, r(m).height));
	const future = [...svg.querySelectorAll('.sec, .mark, .redis-span, .mark-refused')]
		.filter((e) => r(e).left > cb.right + 1).length;
	const notes = document.getElementById('notes');
	const line = [
		'pos=' + document.getElementById('pos').textContent.replace(/ /g, '_'),
		'lesson=' + (document.getElementById('lpos') || { textContent: '-' }).textContent.replace(/ /g, '_'),
		'kind=' + (li ? li.className.split(' ')[0] || 'story' : '-'),
		'now=' + (nb.height > 0 && nb.top >= 0 && nb.bottom <= vh ? 1 : 0),
		'cursor=' + (cb.left >= 0 && cb.right <= vw && cb.top >= 0 && cb.bottom <= vh ? 1 : 0),
		'chart=' + (sb.top >= 0 && sb.bottom <= vh && sb.right <= vw ? 1 : 0),
		'font=' + font.toFixed(1),
		'mark=' + (marks.length ? Math.min(...marks).toFixed(1) : '-'),
		'future=' + future,
		'last=' + (li && (!nx || nx.dataset.run !== li.dataset.run) ? 1 : 0),
		'code=' + document.querySelectorAll('#code pre span').length,
		'broken=' + (document.body.classList.contains('broken') && !!document.querySelector('#now .breakline') ? 1 : 0),
		'notes=' + (notes ? Math.round(r(notes).height) : 0),
		'svg=' + Math.round(sb.width) + 'x' + Math.round(sb.height),
		'present=' + (document.body.classList.contains('present') ? 1 : 0),
	].join(' ');
	return JSON.stringify({ line });
})()`;

(async () => {
	const { targetInfos } = await send('Target.getTargets');
	const page = targetInfos.find((t) => t.type === 'page');
	if (!page) fail('no page target');
	const { sessionId } = await send('Target.attachToTarget', { targetId: page.targetId, flatten: true });
	await send('Runtime.enable', {}, sessionId);
	await send('Log.enable', {}, sessionId);
	await send('Page.enable', {}, sessionId);
	// LOCKBENCH_VIEWPORT=WxH: the page at that size (a projector's 1024x768)
	const vp = /^(\d+)x(\d+)$/.exec(process.env.LOCKBENCH_VIEWPORT || '');
	if (vp)
		await send('Emulation.setDeviceMetricsOverride', { width: +vp[1], height: +vp[2],
			deviceScaleFactor: 1, mobile: false }, sessionId);
	const loaded = once('Page.loadEventFired');
	const t0 = Date.now();
	// REPORT.html#lesson=K&step=N opens it there
	const [file, frag] = html.split('#');
	await send('Page.navigate', { url: 'file://' + path.resolve(file) + (frag ? '#' + frag : '') }, sessionId);
	await loaded;
	// from the navigation to the load event: the page's script has drawn by then
	// (it runs inline, before the load event)
	const loadMs = Date.now() - t0;
	const states = [];
	const read = async (key) => {
		const r = await send('Runtime.evaluate', { expression: process.env.LOCKBENCH_DRIVE_BRIEF ?
			BRIEF : STATE, returnByValue: true }, sessionId);
		states.push(Object.assign({ after: key }, JSON.parse(r.result.value)));
	};
	await read('load');
	for (const key of (keyList || '').split(',').filter(Boolean)) {
		const code = { ArrowRight: 39, ArrowLeft: 37, n: 78, p: 80, z: 90, f: 70, Escape: 27 }[key];
		if (!code) fail(`unknown key ${key}`);
		for (const type of ['keyDown', 'keyUp'])
			await send('Input.dispatchKeyEvent', { type, key, code: key.length > 1 ? key : 'Key' + key.toUpperCase(), text: key.length > 1 ? undefined : key,
				windowsVirtualKeyCode: code }, sessionId);
		await read(key);
	}
	const { data } = await send('Page.captureScreenshot', { format: 'png', captureBeyondViewport: false }, sessionId);
	fs.writeFileSync(shot, Buffer.from(data, 'base64'));
	clearTimeout(timer);
	process.stdout.write(JSON.stringify({ load_ms: loadMs, states, errors }, null, 1) + '\n', () => finish(0));
})().catch((e) => fail(e.stack || String(e)));
