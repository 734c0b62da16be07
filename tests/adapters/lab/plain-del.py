#!/usr/bin/env python3
"""The lab's skeleton filled wrong: SET NX PX with a token, released by a
plain DEL. A holder that wakes after its lease deletes the next holder's
lock: it passes exercise 1 and fails exercise 2 (holder-pause: foreign
releases; tests/test_exercise.c)."""
import os
import sys
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), "../../../docs/lab"))
import my_lock  # noqa: E402


class Lock(my_lock.MyLock):
    def acquire(self):
        token = uuid.uuid4().hex
        return token if self.r.set(self.key, token, nx=True, px=self.ttl_ms) else None

    def release(self):
        return self.r.delete(self.key) == 1


sys.exit(my_lock.main(Lock))
