#!/usr/bin/env python3
"""The lab's skeleton filled wrong: SET NX with no expiry (a token, and a
Lua compare-and-delete). A crashed holder's lock stays for good: it fails
exercise 1 (holder-crash: deadlock; tests/test_exercise.c)."""
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
        return self.token if self.r.set(self.key, self.token, nx=True) else None

    def release(self):
        return self.r.eval(RELEASE, 1, self.key, self.token) == 1


sys.exit(my_lock.main(Lock))
