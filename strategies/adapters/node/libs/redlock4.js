'use strict';
/*
 * redlock 4.2.0 (node-redlock's latest stable release), as its README shows:
 * new Redlock([clients], {driftFactor, retryCount, retryDelay, retryJitter}),
 * redlock.lock(resource, ttl) -> Lock, lock.unlock(), lock.extend(ttl), and
 * the 'clientError' event. No lost notice: the library has none.
 *
 * It rejects a failed acquire with a LockError whether the resource was held
 * or the nodes were unreachable; 'clientError' events during the attempt tell
 * the two apart: when the nodes that did not fail were enough for a quorum,
 * they refused, so the lock was held (busy); otherwise too many nodes failed
 * for any answer (an error).
 */
const { versionOf, falseOn } = require('../protocol');
const Redlock = require('redlock-v4');

/* A new object for each session: its own client, lock and state. */
module.exports = function make() {
  let redlock, resource, ttl, lock = null, clientErrors = 0;
  const clients = [];

  return {
    library: 'redlock',
    version: versionOf('redlock-v4'),
    extend: true,
    lost: false,
    extends: 'never', /* lock() sets the lease once; extend() is asked */
    config(cfg, ctx) {
      for (const url of cfg.nodes) clients.push(ctx.redis(url, cfg.timeout_ms));
      resource = cfg.key;
      ttl = cfg.ttl_ms;
      /* wait=library: its README's settings (retryCount 10, retryDelay 200,
       * retryJitter 200, driftFactor 0.01); wait=one: a single attempt */
      redlock = new Redlock(clients, cfg.wait === 'library' ? {} : { retryCount: 0 });
      redlock.on('clientError', (e) => {
        clientErrors++;
        process.stderr.write('redlock clientError: ' + e + '\n');
      });
    },
    async acquire() {
      const before = clientErrors;
      try {
        lock = await redlock.lock(resource, ttl);
      } catch (e) {
        const quorum = Math.floor(clients.length / 2) + 1;
        if (e instanceof Redlock.LockError && clients.length - (clientErrors - before) >= quorum)
          return null;
        throw e;
      }
      return { token: lock.value, validity_ms: lock.expiration - Date.now() };
    },
    async release() {
      const l = lock, before = clientErrors;
      lock = null;
      try {
        await l.unlock();
        return true;
      } catch (e) {
        if (e instanceof Redlock.LockError && clientErrors === before) return false;
        throw e;
      }
    },
    extend(ms) {
      return falseOn(Redlock.LockError, async () => { lock = await lock.extend(ms); });
    },
    close() {
      return Promise.all(clients.map((c) => c.quit().catch(() => {})));
    },
  };
};
