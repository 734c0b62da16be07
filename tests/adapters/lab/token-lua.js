#!/usr/bin/env node
'use strict';
/* The lab's Node skeleton (docs/lab/my_lock.js) filled correctly: SET NX PX
 * with a random token, released by a Lua compare-and-delete
 * (tests/test_exercise.c runs adapter-test and exercise 2 on it). */
const crypto = require('crypto');
const path = require('path');
const { MyLock, main } = require(path.join(__dirname, '..', '..', '..', 'docs', 'lab', 'my_lock.js'));

const RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then " +
  "return redis.call('del', KEYS[1]) else return 0 end";

class Lock extends MyLock {
  async acquire() {
    this.token = crypto.randomBytes(16).toString('hex');
    const ok = await this.r.set(this.key, this.token, { NX: true, PX: this.ttlMs });
    return ok === null ? null : this.token;
  }

  async release() {
    return (await this.r.eval(RELEASE, { keys: [this.key], arguments: [this.token] })) === 1;
  }
}

main(Lock);
