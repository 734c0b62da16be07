'use strict';
/*
 * node-redis-warlock 1.0.2, as its README shows: warlock = Warlock(client)
 * with a node-redis client of the callback API (redis 3.1.2, the version its
 * package.json tests with: devDependencies redis ^3.1.2), then
 * warlock.lock(key, ttl, (err, unlock, id) => ...), unlock(), and
 * warlock.touch(key, id, ttl, cb) to change the lease. It locks the key
 * key + ":lock" (the manifest's outside_key).
 *
 * wait=one: warlock.lock, one SET NX PX: an unlock function is a grant (the
 * callback's id, the value it wrote, is the token), none is `busy`, err an
 * error. wait=library: warlock.optimistic(key, ttl, maxAttempts, wait, cb)
 * with its README's example values (4 attempts, 1000 ms apart: the library
 * has no defaults of its own); after its last attempt it fails with "unable
 * to obtain lock" (busy). optimistic's callback gives no id: the value is
 * read from the reply of the SET it sent through this client (a transparent
 * Proxy that forwards every call and looks at the replies of SET).
 *
 * Its release and touch run through node-redis-script, which gives back
 * undefined, not an error, when EVALSHA fails for any reason but NOSCRIPT:
 * the adapter answers `error` then (the library's API does not say more).
 * The client has no command timeout: each request is raced against the
 * network timeout, and a grant that comes after that is unlocked at once.
 * Reconnecting: the client's retry_strategy is ioredis's default (50 ms per
 * attempt, at most 2 s), as the ioredis-based adapters get; the offline
 * queue is off, so a command while disconnected fails at once.
 * `--adapter-arg defaults` changes nothing: lock() has no default ttl.
 * No Sentinel support (node-redis 3 has none): config with sentinels= fails.
 */
const { versionOf, errorText, tlsOptions } = require('../protocol');
const Warlock = require('node-redis-warlock');
const redis = require('redis-v3');

const README_ATTEMPTS = 4, README_WAIT = 1000;

function within(ms, what, start) {
  return new Promise((resolve, reject) => {
    let over = false;
    const t = setTimeout(() => { over = true; reject(new Error(`no reply to ${what} within ${ms} ms`)); }, ms);
    start((late) => { if (!over) clearTimeout(t); return over && late; }, resolve, reject);
  });
}

/* A new object for each session: its own client, lock and state. */
module.exports = function make() {
  let client, warlock, key, ttl, timeoutMs, waitOne;
  let held = null;        /* { unlock, id } */
  let lastValue = null;   /* the value of the last SET that was granted */

  return {
    library: 'node-redis-warlock',
    version: versionOf('node-redis-warlock'),
    extend: true,
    lost: false,
    extends: 'never',
    config(cfg) {
      if (cfg.sentinels) throw new Error('node-redis 3, the client warlock takes, has no Sentinel support');
      timeoutMs = cfg.timeout_ms;
      waitOne = cfg.wait !== 'library';
      key = cfg.key;
      ttl = cfg.ttl_ms;
      /* rediss://: node-redis 3's own tls option (Node's tls.connect options) */
      const secure = tlsOptions(cfg.tls, cfg.nodes[0]);
      client = redis.createClient(cfg.nodes[0], {
        ...(secure ? { tls: secure } : {}),
        connect_timeout: timeoutMs,
        enable_offline_queue: false,
        retry_strategy: (o) => Math.min(o.attempt * 50, 2000),
      });
      client.on('error', (e) => process.stderr.write('node-redis: ' + errorText(e) + '\n'));
      const seen = new Proxy(client, {
        get(target, prop) {
          if (prop === 'set') {
            return (...args) => {
              const cb = args.pop();
              target.set(...args, (err, reply) => {
                if (!err && reply) lastValue = String(args[1]);
                cb(err, reply);
              });
            };
          }
          const v = Reflect.get(target, prop, target);
          return typeof v === 'function' ? v.bind(target) : v;
        },
      });
      warlock = Warlock(seen);
      return new Promise((resolve) => {
        const t = setTimeout(resolve, timeoutMs);
        client.once('ready', () => { clearTimeout(t); resolve(); });
      });
    },
    acquire() {
      lastValue = null;
      /* wait=library: optimistic's own attempts, however long they take */
      return within(waitOne ? timeoutMs : 2147483647, 'SET', (late, resolve, reject) => {
        const answer = (err, unlock, id) => {
          if (late(true)) {
            if (typeof unlock === 'function') unlock(); /* a grant after we gave up */
            return;
          }
          if (err && !waitOne && err.maxAttempts !== undefined) return resolve(null);
          if (err) return reject(err);
          if (typeof unlock !== 'function') return resolve(null);
          held = { unlock, id: id || lastValue };
          resolve({ token: held.id, validity_ms: ttl });
        };
        if (waitOne) warlock.lock(key, ttl, answer);
        else warlock.optimistic(key, ttl, README_ATTEMPTS, README_WAIT, answer);
      });
    },
    release() {
      const h = held;
      held = null;
      return within(timeoutMs, 'the unlock script', (late, resolve, reject) => {
        h.unlock((err, result) => {
          if (late(true)) return;
          if (err) return reject(err);
          if (result === undefined) return reject(new Error('unlock gave no result (node-redis-script drops EVALSHA errors)'));
          resolve(result === 1);
        });
      });
    },
    extend(ms) {
      return within(timeoutMs, 'the touch script', (late, resolve, reject) => {
        warlock.touch(key, held.id, ms, (err, result) => {
          if (late(true)) return;
          if (err) return reject(err);
          if (result === undefined) return reject(new Error('touch gave no result (node-redis-script drops EVALSHA errors)'));
          resolve(result === 'OK');
        });
      });
    },
    close() {
      if (!client.connected) return client.end(false);
      return within(timeoutMs, 'QUIT', (late, resolve) => client.quit(() => { late(); resolve(); })).catch(() => {});
    },
  };
};
