'use strict';
/*
 * null.js - the null "library" (manifest null-node.adapter): no lock, no
 * Redis. Every acquire is granted at once and every release released, through
 * protocol.js's serve(), the loop every Node library adapter here runs: what a
 * section costs through it is the protocol and that loop (`lockbench bench`,
 * item 3, sets it against the C null adapter and a redis-py section).
 */
module.exports = {
  library: 'null',
  version: '1',
  extend: true,
  lost: false,
  extends: 'never',
  async config() {},
  async acquire() { return {}; },
  async release() { return true; },
  async extend() { return true; },
  close() {},
};
