// bsm-redislock: lockbench's adapter for github.com/bsm/redislock, on one
// Redis node, a go-redis v9 client (its RedisClient). Only its public API:
//
//	acquire  redislock.New(client).Obtain(ctx, key, ttl, nil): nil options,
//	         its default RetryStrategy NoRetry (one attempt, wait=one and
//	         wait=library alike); ErrNotObtained is busy. token=Lock.Token()
//	release  Lock.Release (ErrLockNotHeld: not-owned)
//	extend   Lock.Refresh(ctx, ttl, nil) (ErrNotObtained: not-owned)
//
// "defaults" changes nothing: its only default, NoRetry, is always kept, and
// its ttl has none (Obtain's argument: lockbench's ttl_ms).
//
// redislock has no watchdog and no lost notice: nothing here ever says lost.
// The protocol and the go-redis client are ../proto.
package main

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/bsm/redislock"

	"lockbench.invalid/redislocks/proto"
)

type lock struct {
	cfg *proto.Config
	c   *redislock.Client
	l   *redislock.Lock
}

func open(cfg *proto.Config) (proto.Lock, error) {
	return &lock{cfg: cfg, c: redislock.New(cfg.Clients[0])}, nil
}

func (l *lock) Acquire(ctx context.Context) (string, error) {
	got, err := l.c.Obtain(ctx, l.cfg.Key, l.cfg.TTL, nil)
	if errors.Is(err, redislock.ErrNotObtained) {
		return "busy", nil
	}
	if err != nil {
		return "", err
	}
	l.l = got
	return "acquired token=" + got.Token(), nil
}

func (l *lock) Release(ctx context.Context) (string, error) {
	got := l.l
	l.l = nil
	if got == nil {
		return "not-owned", nil
	}
	err := got.Release(ctx)
	if errors.Is(err, redislock.ErrLockNotHeld) {
		return "not-owned", nil
	}
	if err != nil {
		return "", err
	}
	return "released", nil
}

func (l *lock) Extend(ctx context.Context, ttl time.Duration) (string, error) {
	if l.l == nil {
		return "not-owned", nil
	}
	err := l.l.Refresh(ctx, ttl, nil)
	if errors.Is(err, redislock.ErrNotObtained) {
		return "not-owned", nil
	}
	if err != nil {
		return "", err
	}
	return "extended", nil
}

func main() {
	os.Exit(proto.Main(proto.Library{Name: "bsm-redislock", Module: "github.com/bsm/redislock", Extend: true, New: open}))
}
