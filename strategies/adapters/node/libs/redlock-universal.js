'use strict';
/*
 * redlock-universal 0.8.5: createLock (one node) and createRedlock (several),
 * with IoredisAdapter, as its README shows; lock.using(routine(signal)), the
 * form it recommends, extends the lease while the routine runs and aborts the
 * signal when an extension fails: passed on as the protocol's lost notice.
 * `--adapter-arg manual` uses acquire()/release(handle)/extend(handle, ttl).
 *
 * wait=one: retryAttempts 0 (one attempt); wait=library: its defaults
 * (retryAttempts 3, retryDelay 100 ms for createLock, 200 ms for createRedlock).
 * Its circuit breaker (on by default: open after 5 failed commands, for 60 s)
 * stays on: users run it. A failed attempt is a LockAcquisitionError, whose
 * cause says whether the lock was held ("already held") or Redis failed.
 */
const { holdWith, versionOf, watchValue } = require('../protocol');

module.exports = function make(kind) {
  const lib = require('redlock-universal');
  let lock = null, handle = null, hold = null, ctx, manual, seen;
  const clients = [];

  function busy(e) {
    if (!(e instanceof lib.LockAcquisitionError) && !(e instanceof lib.RedlockError)) return false;
    const text = [e.message, e.cause && e.cause.message].join(' ');
    return /already held|held by another|quorum/i.test(text) && !/ECONNREFUSED|timeout|Circuit breaker|closed/i.test(text);
  }

  return {
    library: 'redlock-universal',
    version: versionOf('redlock-universal'),
    /* the method in manual mode alone: protocol.js reads it as hello's extend=
     * too (a method of that name said extend=yes in using() mode, where extend
     * has no handle: "Lock handle is required") */
    extend: process.argv.includes('manual') &&
      (async (ms) => (await lock.extend(handle, ms)) !== false),
    lost: !process.argv.includes('manual'),
    /* using() extends by itself, and its API does not say when */
    extends: process.argv.includes('manual') ? 'never' : 'silently',
    config(cfg, c) {
      ctx = c;
      manual = process.argv.includes('manual');
      for (const url of kind === 'redlock' ? cfg.nodes : cfg.nodes.slice(0, 1))
        clients.push(ctx.redis(url, cfg.timeout_ms));
      const adapters = clients.map((cl) => new lib.IoredisAdapter(cl));
      const options = { key: cfg.key, ttl: cfg.ttl_ms };
      if (cfg.wait !== 'library') options.retryAttempts = 0;
      lock = kind === 'redlock'
        ? lib.createRedlock({ adapters, ...options })
        : lib.createLock({ adapter: adapters[0], ...options });
      seen = watchValue(lock); /* using()'s value, for the servers' foreign releases */
    },
    async acquire() {
      try {
        if (manual) {
          handle = await lock.acquire();
          return { token: handle.value };
        }
        seen.value = null;
        hold = holdWith((routine) => lock.using(routine), ctx);
        await hold.held;
        return seen.value ? { token: seen.value } : {};
      } catch (e) {
        hold = null;
        if (busy(e)) return null;
        throw e;
      }
    },
    async release() {
      if (manual) {
        const h = handle;
        handle = null;
        return (await lock.release(h)) !== false;
      }
      const h = hold;
      hold = null;
      await h.release();
      return true;
    },
    close() {
      return Promise.all(clients.map((cl) => cl.quit().catch(() => {})));
    },
  };
};
