'use strict';
/*
 * redis-lock 1.0.0, as its README shows: lock = require('redis-lock')(client,
 * retryDelay) with a node-redis 4 client (createClient, connect: its README
 * says "Requires v4 of node-redis"), done = await lock(name, timeout), then
 * await done(). It locks the key "lock." + name (the manifest's outside_key).
 *
 * Its public API is one call, lock(), that waits: a refused SET (or any
 * error) is retried after retryDelay, forever, and its promise resolves only
 * with a grant. Nothing in the API says "held by another" or "Redis failed".
 * So this adapter hands the library the client behind a transparent Proxy
 * that forwards every call to the real client and only looks at the replies
 * of SET (as protocol.js's watchValue looks at a library's own acquire):
 * null is a refusal, a throw is an error, and the value the SET wrote is the
 * one the library's lock holds.
 *
 * wait=one: retryDelay 2147483647 ms (the longest delay Node's setTimeout
 * keeps: the retry the library schedules never comes within a run), so one
 * lock() is one SET: a null reply is `busy`, a throw `error`. A SET with no
 * reply within the network timeout is an `error`; if its grant comes later
 * after all, the adapter calls that grant's own done() at once.
 * wait=library: its default retryDelay (50 ms), retried forever, errors too.
 *
 * token=: the value its SET wrote, Date.now() + timeout + 1 on the client's
 * clock: a timestamp, not a secret, which its release never reads (done()
 * sends a plain DEL when the client's clock says the lease has not run out,
 * and nothing otherwise). The adapter reports it so that the servers' sets
 * are matched to sections by value, as for every other library.
 * `--adapter-arg defaults`: lock(name) without a timeout, the library's 5000 ms.
 * No Sentinel support (node-redis 4 has none): config with sentinels= fails.
 */
const { versionOf, errorText, tlsOptions } = require('../protocol');
const redisLock = require('redis-lock');
const { createClient } = require('redis-v4');

const NEVER = 2147483647;
const DEFAULT_TIMEOUT = 5000; /* index.js's DEFAULT_TIMEOUT, for validity_ms */

function within(ms, promise, what) {
  let t;
  return Promise.race([
    promise.finally(() => clearTimeout(t)),
    new Promise((_, reject) => { t = setTimeout(() => reject(new Error(`no reply to ${what} within ${ms} ms`)), ms); }),
  ]);
}

/* A new object for each session: its own client, lock and state. */
module.exports = function make() {
  let client, lock, name, ttl, timeoutMs, waitOne, done = null;
  let lastValue = null;   /* the value of the last SET that was granted */
  let pending = null;     /* wait=one: told the outcome of the attempt's SET */

  return {
    library: 'redis-lock',
    version: versionOf('redis-lock'),
    extend: false,
    lost: false,
    extends: 'never',
    async config(cfg) {
      if (cfg.sentinels) throw new Error('node-redis 4, the client redis-lock takes, has no Sentinel support');
      timeoutMs = cfg.timeout_ms;
      waitOne = cfg.wait !== 'library';
      name = cfg.key;
      ttl = cfg.defaults ? undefined : cfg.ttl_ms;
      /* the network timeout for connecting; commands fail at once while it is
       * not connected (it reconnects by its default strategy) */
      /* rediss://: node-redis 4's own TLS options, socket: { tls: true, ca, cert, key,
       * rejectUnauthorized } (passed to Node's tls.connect) */
      const secure = tlsOptions(cfg.tls, cfg.nodes[0]);
      client = createClient({ url: cfg.nodes[0], disableOfflineQueue: true,
        socket: { connectTimeout: timeoutMs, ...(secure ? { tls: true, ...secure } : {}) } });
      client.on('error', (e) => process.stderr.write('node-redis: ' + errorText(e) + '\n'));
      const seen = new Proxy(client, {
        get(target, prop) {
          if (prop === 'set') {
            return async (...args) => {
              const tell = pending;
              pending = null;
              let reply;
              try {
                reply = await target.set(...args);
              } catch (e) {
                if (tell) tell({ error: e });
                throw e;
              }
              if (reply !== null) lastValue = String(args[1]);
              if (tell) tell({ granted: reply !== null });
              return reply;
            };
          }
          const v = Reflect.get(target, prop, target);
          return typeof v === 'function' ? v.bind(target) : v;
        },
      });
      lock = waitOne ? redisLock(seen, NEVER) : redisLock(seen);
      await within(timeoutMs, client.connect(), 'connect').catch((e) =>
        process.stderr.write('node-redis connect: ' + errorText(e) + '\n'));
    },
    async acquire() {
      lastValue = null;
      if (!waitOne) {
        done = await lock(name, ttl);
        return { token: lastValue, validity_ms: ttl === undefined ? DEFAULT_TIMEOUT : ttl };
      }
      const told = new Promise((resolve) => { pending = resolve; });
      const granted = lock(name, ttl);
      let outcome;
      try {
        outcome = await within(timeoutMs, told, 'SET');
      } catch (e) {
        pending = null;
        granted.then((d) => d()).catch(() => {}); /* a late grant: let it go */
        throw e;
      }
      if (outcome.error) throw outcome.error;
      if (!outcome.granted) return null;
      done = await granted;
      return { token: lastValue, validity_ms: ttl === undefined ? DEFAULT_TIMEOUT : ttl };
    },
    async release() {
      const d = done;
      done = null;
      /* done() resolves to DEL's reply when it sent one (1 or 0), and to
       * undefined when its clock said the lease had run out (nothing sent) */
      const deleted = await within(timeoutMs, d(), 'DEL');
      return deleted === 1;
    },
    close() {
      /* QUIT when connected; otherwise (reconnecting) drop the socket */
      const bye = client.isReady ? client.quit() : client.disconnect();
      return within(timeoutMs, bye, 'QUIT').catch(() => {});
    },
  };
};
