'use strict';
/*
 * redis-semaphore 5.8.0: Mutex (one node) and RedlockMutex (several), as its
 * README shows: new Mutex(ioredisClient, key, options) or new
 * RedlockMutex([clients], key, options), then acquire()/tryAcquire(),
 * release(). Both refresh the lease every 0.8 x lockTimeout while held, and
 * call onLockLost(err) when a refresh finds the lock gone.
 *
 * wait=one: acquireAttemptsLimit 1 and tryAcquire() (false: busy), and an
 * onLockLost that passes the loss on as the protocol's lost notice.
 * wait=library: the library's own waiting (retryInterval 10 ms, acquireTimeout
 * 10 s) and its default onLockLost, which throws: in a refresh timer, an
 * uncaught exception that ends the Node process. lockbench records that as
 * the holder's death (adapter-died), a finding about the library.
 *
 * It stores the lock under "mutex:" + key, outside the key lockbench gives
 * it: this adapter's manifest marks it, and lockbench refuses to run it on
 * servers it did not start (--redis).
 */
const { versionOf } = require('../protocol');
module.exports = function make(kind) {
  const lib = require('redis-semaphore');
  const Ctor = kind === 'redlock' ? lib.RedlockMutex : lib.Mutex;
  let mutex = null, makeMutex;
  const clients = [];

  return {
    library: 'redis-semaphore',
    version: versionOf('redis-semaphore'),
    extend: false,
    lost: true,
    extends: 'silently', /* refreshed every 0.8 x lockTimeout, inside the library */
    config(cfg, ctx) {
      for (const url of kind === 'redlock' ? cfg.nodes : cfg.nodes.slice(0, 1))
        clients.push(ctx.redis(url, cfg.timeout_ms));
      const target = kind === 'redlock' ? clients : clients[0];
      const options = { lockTimeout: cfg.ttl_ms };
      if (cfg.wait !== 'library') {
        options.acquireAttemptsLimit = 1;
        options.onLockLost = (e) => ctx.lost('onLockLost: ' + (e && e.message));
      }
      makeMutex = () => new Ctor(target, cfg.key, options);
    },
    async acquire() {
      mutex = makeMutex(); /* one Mutex per section: its identifier is its token */
      /* tryAcquire: false after its attempts (one, or 10 s of them) */
      if (!(await mutex.tryAcquire())) return null;
      return { token: mutex.identifier };
    },
    async release() {
      const m = mutex;
      mutex = null;
      await m.release(); /* it does not say whether the lock was still its own */
      return true;
    },
    close() {
      return Promise.all(clients.map((c) => c.quit().catch(() => {})));
    },
  };
};
