#!/usr/bin/node
'use strict';
/*
 * adapter.js LIBRARY [ARGS...] - lockbench's adapter for one Node lock library
 * (docs/adapters.md, docs/libraries/). LIBRARY is one of the names below; the
 * manifests in strategies/adapters/*.adapter name it. --check prints the
 * library and its version and exits 0 when it loads. Each loader below makes a
 * new library object: a host (protocol.js) calls it once a session.
 */
const { serve } = require('./protocol');

const libraries = {
  'redlock-4': () => require('./libs/redlock4')(),
  'redlock-5': () => require('./libs/redlock5')('redlock-v5'),
  'sesamecare-redlock': () => require('./libs/redlock5')('@sesamecare-oss/redlock'),
  'redis-semaphore-mutex': () => require('./libs/redis-semaphore')('mutex'),
  'redis-semaphore-redlock': () => require('./libs/redis-semaphore')('redlock'),
  'redlock-universal-lock': () => require('./libs/redlock-universal')('lock'),
  'redlock-universal-redlock': () => require('./libs/redlock-universal')('redlock'),
  'redis-lock': () => require('./libs/redis-lock')(),
  'node-redis-warlock': () => require('./libs/warlock')(),
  'null': () => require('./libs/null'), /* no lock: the protocol's own cost (null-node.adapter) */
};

const name = process.argv[2];
if (!libraries[name]) {
  process.stdout.write(`unknown library '${name}': one of ${Object.keys(libraries).join(', ')}\n`);
  process.exit(1);
}
serve(libraries[name], process.argv.slice(3));
