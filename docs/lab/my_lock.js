#!/usr/bin/env node
'use strict';
/*
 * my_lock.js - your lock, for lockbench's lab (docs/lab.md), in Node with
 * node-redis 4.
 *
 * Fill in MyLock's acquire() and release() below (extend() is optional),
 * then, from lockbench's directory:
 *
 *     chmod +x my_lock.js
 *     build/lockbench adapter-test exec:./my_lock.js   # does it answer as it should?
 *     build/lockbench exercise 1 exec:./my_lock.js     # the oracle grades it
 *
 * Everything below the line "lockbench's side" speaks lockbench's adapter
 * protocol for you (docs/adapters.md): you need not read it. node-redis is
 * your own `npm install redis@4` when there is one, else lockbench's pinned
 * copy (strategies/adapters/node, made by harness/deps.sh).
 */

class MyLock {
  /* One client's lock on one key; lockbench makes one per client.
   *   this.r      a connected node-redis 4 client of the lock's server
   *   this.key    the lock's key (a string)
   *   this.ttlMs  the lease lockbench asks for, in milliseconds */
  constructor(r, key, ttlMs) {
    this.r = r;
    this.key = key;
    this.ttlMs = ttlMs;
  }

  /* Try once, without waiting. Return the value you wrote (a string: your
   * token) when you now hold the lock, or null when another client holds it.
   * A thrown error is told to lockbench as an error, and lockbench asks again
   * a little later. */
  async acquire() {
    throw new Error('write MyLock.acquire() (docs/lab.md)');
  }

  /* Let go of the lock. Return true when you released your own lock, false
   * when it was no longer yours (it expired, or another holds it). */
  async release() {
    throw new Error('write MyLock.release() (docs/lab.md)');
  }

  /* Optional: define `async extend(ms)` to make your lease ms long from now;
   * return true when it was still yours, false when not. Without it, this
   * lock says it does not extend. */
}

/* ---- lockbench's side: you need not read further ------------------------ */

const path = require('path');
const readline = require('readline');

function nodeRedis() {
  try {
    return require('redis');
  } catch (e) {
    const adapters = process.env.LOCKBENCH_ADAPTERS ||
      path.join(__dirname, '..', '..', 'strategies', 'adapters');
    return require(path.join(adapters, 'node', 'node_modules', 'redis-v4'));
  }
}

function oneLine(e) {
  const text = (e && e.name ? e.name + ': ' : '') + (e && e.message ? e.message : String(e));
  return text.split(/\s+/).filter(Boolean).join(' ').slice(0, 300) || 'unknown error';
}

function tokenWord(v) {
  const s = String(v);
  return s.length > 0 && s.length <= 200 && /^[\x21-\x7e]+$/.test(s) ? ' token=' + s : '';
}

async function answer(LockClass, state, words) {
  const what = words[0];
  if (what === 'hello') {
    const ext = typeof LockClass.prototype.extend === 'function' ? 'yes' : 'no';
    return 'hello 3 library=my-lock version=0.1 language=node extend=' + ext +
      ' lost=no extends=never';
  }
  if (what === 'config') {
    const cfg = {};
    for (const w of words.slice(1)) {
      const i = w.indexOf('=');
      if (i > 0) cfg[w.slice(0, i)] = w.slice(i + 1);
    }
    const timeout = Number(cfg.timeout_ms);
    const r = nodeRedis().createClient({ url: cfg.nodes.split(',')[0], disableOfflineQueue: true,
      socket: { connectTimeout: timeout } });
    r.on('error', (e) => process.stderr.write('node-redis: ' + oneLine(e) + '\n'));
    await r.connect();
    state.lock = new LockClass(r, cfg.key, Number(cfg.ttl_ms));
    state.client = r;
    return 'ok';
  }
  const lock = state.lock;
  if (!lock) return 'error no config yet';
  if (what === 'acquire') {
    const got = await lock.acquire();
    if (got === null || got === undefined || got === false) return 'busy';
    return 'acquired' + (got === true ? '' : tokenWord(got));
  }
  if (what === 'release') return (await lock.release()) ? 'released' : 'not-owned';
  if (what === 'extend') {
    if (typeof lock.extend !== 'function') return 'unsupported';
    return (await lock.extend(Number(words[1]))) ? 'extended' : 'not-owned';
  }
  return 'error unknown request ' + what;
}

/* Answer lockbench's requests on stdin, one line each and in turn, with
 * LockClass. */
function main(LockClass = MyLock) {
  const state = {};
  const say = (line) => process.stdout.write(line + '\n');
  let queue = Promise.resolve();
  const rl = readline.createInterface({ input: process.stdin, terminal: false });
  rl.on('line', (raw) => {
    const words = raw.split(/\s+/).filter(Boolean);
    if (!words.length) return;
    queue = queue.then(async () => {
      if (words[0] === 'quit') {
        say('bye');
        if (state.client) await state.client.disconnect().catch(() => {});
        process.exit(0);
      }
      try {
        say(await answer(LockClass, state, words));
      } catch (e) { /* yours or node-redis's: an error, never a dead adapter */
        say('error ' + oneLine(e));
      }
    });
  });
  rl.on('close', () => queue.then(() => process.exit(0)));
}

module.exports = { MyLock, main };

if (require.main === module) main();
