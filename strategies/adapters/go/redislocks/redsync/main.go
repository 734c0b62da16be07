// redsync: lockbench's adapter for go-redsync/redsync v4, on one Redis node
// or on N (its quorum, N/2+1, as Redlock), each node a go-redis v9 client
// behind redsync's own goredis pool (redis/goredis/v9.NewPool). Only
// redsync's public API:
//
//	acquire  rs.NewMutex(key, WithExpiry(ttl)) (with "defaults": rs.NewMutex(key),
//	         its own 8 s expiry); wait=one: TryLockContext (one
//	         try); wait=library: LockContext (its 32 tries, 50-250 ms apart).
//	         token=Mutex.Value(), validity_ms=Mutex.Until() - now
//	release  Mutex.UnlockContext
//	extend   Mutex.ExtendContext (the lease back to the mutex's expiry; an
//	         extend by another length: a mutex of that expiry WithValue(Value()))
//
// The argument setnx-on-extend adds WithSetNXOnExtend() (PR #149): its extend
// SETs the key again where it is gone (a node restarted empty).
//
// redsync has no watchdog and no lost notice: nothing here ever says lost.
// The protocol and the go-redis clients are ../proto.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/go-redsync/redsync/v4"
	"github.com/go-redsync/redsync/v4/redis"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"

	"lockbench.invalid/redislocks/proto"
)

type lock struct {
	cfg    *proto.Config
	rs     *redsync.Redsync
	quorum int // redsync.go, NewMutex: len(pools)/2 + 1
	m      *redsync.Mutex
	expiry []redsync.Option // WithExpiry(ttl_ms), or none: its own 8 s (defaults); WithSetNXOnExtend
	ttl    time.Duration    // the expiry its mutexes have
}

func open(cfg *proto.Config) (proto.Lock, error) {
	pools := make([]redis.Pool, len(cfg.Clients))
	for i, c := range cfg.Clients {
		pools[i] = goredis.NewPool(c)
	}
	l := &lock{cfg: cfg, rs: redsync.New(pools...), quorum: len(pools)/2 + 1, ttl: 8 * time.Second}
	if !cfg.Defaults {
		l.expiry, l.ttl = []redsync.Option{redsync.WithExpiry(cfg.TTL)}, cfg.TTL
	}
	if cfg.Flags["setnx-on-extend"] {
		l.expiry = append(l.expiry, redsync.WithSetNXOnExtend())
	}
	return l, nil
}

// tally: what each node said, from the error redsync joined (errors.Join)
// of its nodes' answers: a node's Redis error, the lock taken (or gone) there,
// or already expired there.
func tally(err error) (failed, notOurs int) {
	var taken *redsync.ErrTaken
	if errors.As(err, &taken) {
		return 0, len(taken.Nodes)
	}
	var walk func(error)
	walk = func(e error) {
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, x := range j.Unwrap() {
				walk(x)
			}
			return
		}
		var re *redsync.RedisError
		var nt *redsync.ErrNodeTaken
		switch {
		case errors.As(e, &re):
			failed++
		case errors.As(e, &nt), errors.Is(e, redsync.ErrLockAlreadyExpired):
			notOurs++
		}
	}
	if err != nil {
		walk(err)
	}
	return failed, notOurs
}

func (l *lock) Acquire(ctx context.Context) (string, error) {
	m := l.rs.NewMutex(l.cfg.Key, l.expiry...)
	var err error
	if l.cfg.Library {
		err = m.LockContext(ctx)
	} else {
		err = m.TryLockContext(ctx)
	}
	if err != nil {
		// not granted: an error when nodes failed and no quorum said taken
		if failed, notOurs := tally(err); failed > 0 && notOurs < l.quorum {
			return "", err
		}
		return "busy", nil
	}
	l.m = m
	return fmt.Sprintf("acquired token=%s validity_ms=%d", m.Value(), max(0, time.Until(m.Until()).Milliseconds())), nil
}

// settled: a quorum not ours is not-owned; else, with nodes failed, an error.
func (l *lock) settled(err error) (string, error) {
	failed, notOurs := tally(err)
	if notOurs >= l.quorum || failed == 0 {
		return "not-owned", nil
	}
	return "", err
}

func (l *lock) Release(ctx context.Context) (string, error) {
	m := l.m
	l.m = nil
	if m == nil {
		return "not-owned", nil
	}
	ok, err := m.UnlockContext(ctx)
	if ok {
		return "released", nil
	}
	return l.settled(err)
}

func (l *lock) Extend(ctx context.Context, ttl time.Duration) (string, error) {
	if l.m == nil {
		return "not-owned", nil
	}
	m := l.m
	if ttl != l.ttl {
		m = l.rs.NewMutex(l.cfg.Key, append(l.expiry, redsync.WithExpiry(ttl), redsync.WithValue(l.m.Value()))...)
	}
	ok, err := m.ExtendContext(ctx)
	if ok {
		return "extended", nil
	}
	if errors.Is(err, redsync.ErrExtendFailed) {
		return "", err // a quorum touched, after its validity: redsync's own failure
	}
	return l.settled(err)
}

func main() {
	os.Exit(proto.Main(proto.Library{Name: "redsync", Module: "github.com/go-redsync/redsync/v4", Extend: true,
		Flags: []string{"setnx-on-extend"}, New: open}))
}
