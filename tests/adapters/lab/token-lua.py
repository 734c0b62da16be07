#!/usr/bin/env python3
"""The lab's skeleton (docs/lab/my_lock.py) filled correctly: SET NX PX with a
random token, released by a Lua compare-and-delete. It passes exercises 1
and 2 (tests/test_exercise.c)."""
import os
import sys
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), "../../../docs/lab"))
import my_lock  # noqa: E402

RELEASE = ("if redis.call('get', KEYS[1]) == ARGV[1] then "
           "return redis.call('del', KEYS[1]) else return 0 end")


class Lock(my_lock.MyLock):
    def acquire(self):
        self.token = uuid.uuid4().hex
        if self.r.set(self.key, self.token, nx=True, px=self.ttl_ms):
            return self.token
        return None

    def release(self):
        return self.r.eval(RELEASE, 1, self.key, self.token) == 1


sys.exit(my_lock.main(Lock))
