'use strict';
/*
 * node-redlock 5 (redlock 5.0.0-beta.2, the version its README documents) and
 * its maintained fork @sesamecare-oss/redlock 1.4.0: the same API. As the
 * README shows: new Redlock([ioredis clients], settings), an 'error' listener
 * that ignores ResourceLockedError, and redlock.using([resource], duration,
 * routine(signal)): the lease is extended automatically while the routine
 * runs, and when an extension fails the routine's AbortSignal fires; this
 * adapter passes that on as the protocol's lost notice.
 *
 * With a TTL under 600 ms the adapter lowers automaticExtensionThreshold to
 * TTL - 100 ms: with its default of 500 ms, using() refuses every such lock.
 *
 * `--adapter-arg manual` uses acquire()/release()/extend() instead (no
 * automatic extension, no lost notice), the README's other form.
 *
 * A failed attempt is an ExecutionError carrying each attempt's votes: busy
 * when the nodes that did not fail were enough for a quorum (they voted
 * against: ResourceLockedError), an error when too many failed.
 */
const { holdWith, versionOf, falseOn, watchValue } = require('../protocol');

module.exports = function make(pkg) {
  const mod = require(pkg);
  const Redlock = mod.default || mod.Redlock;
  const { ResourceLockedError, ExecutionError } = mod;
  let redlock, resource, ttl, manual, ctx, lock = null, hold = null, seen;
  const clients = [];

  /* busy (or, for a release, not ours): the nodes that did not fail were
   * enough for a quorum and voted against (ResourceLockedError) */
  async function lockedVote(e) {
    if (!(e instanceof ExecutionError) || !e.attempts || !e.attempts.length) return false;
    const stats = await e.attempts[e.attempts.length - 1];
    let failed = 0;
    for (const err of stats.votesAgainst.values()) if (!(err instanceof ResourceLockedError)) failed++;
    return stats.membershipSize - failed >= stats.quorumSize;
  }

  return {
    library: pkg === 'redlock-v5' ? 'redlock' : pkg,
    version: versionOf(pkg),
    /* using() extends by itself and tells of a loss; manual does neither. extend
     * is the method in manual mode alone: protocol.js reads it as hello's
     * extend= too, and using()'s lock is the routine's, not ours to extend */
    extend: process.argv.includes('manual') &&
      ((ms) => falseOn(ExecutionError, async () => { lock = await lock.extend(ms); })),
    lost: !process.argv.includes('manual'),
    extends: process.argv.includes('manual') ? 'never' : 'silently',
    config(cfg, c) {
      ctx = c;
      for (const url of cfg.nodes) clients.push(ctx.redis(url, cfg.timeout_ms));
      resource = cfg.key;
      ttl = cfg.ttl_ms;
      manual = process.argv.includes('manual');
      /* wait=library: the defaults (retryCount 10, retryDelay 200, retryJitter
       * 100, automaticExtensionThreshold 500); wait=one: one attempt */
      const settings = cfg.wait === 'library' ? {} : { retryCount: 0 };
      /* using() refuses a duration under automaticExtensionThreshold (500 ms by
       * default) + 100 ms: with a shorter TTL, the largest threshold it accepts */
      if (!manual && ttl < 600) settings.automaticExtensionThreshold = Math.max(1, ttl - 100);
      redlock = new Redlock(clients, settings);
      seen = watchValue(redlock); /* using()'s value, for the servers' foreign releases */
      redlock.on('error', (e) => {
        if (e instanceof ResourceLockedError) return; /* as its README does */
        process.stderr.write('redlock error: ' + e + '\n');
      });
    },
    async acquire() {
      try {
        if (manual) {
          lock = await redlock.acquire([resource], ttl);
          return { token: lock.value, validity_ms: lock.expiration - Date.now() };
        }
        seen.value = null;
        hold = holdWith((routine) => redlock.using([resource], ttl, routine), ctx);
        await hold.held;
        return seen.value ? { token: seen.value, validity_ms: ttl } : { validity_ms: ttl };
      } catch (e) {
        hold = null;
        if (await lockedVote(e)) return null;
        throw e;
      }
    },
    async release() {
      try {
        if (manual) {
          const l = lock;
          lock = null;
          await l.release();
        } else {
          const h = hold;
          hold = null;
          await h.release();
        }
        return true;
      } catch (e) {
        /* a release that found another value, or none: a ResourceLockedError vote */
        if (await lockedVote(e)) return false;
        throw e;
      }
    },
    close() {
      return Promise.all(clients.map((cl) => cl.quit().catch(() => {})));
    },
  };
};
