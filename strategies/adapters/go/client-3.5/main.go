// etcd-lock with etcd's Go client 3.5 (go.etcd.io/etcd/client/v3): its
// concurrency Mutex checks, once its wait ends, that its own key is still
// there (etcd PR #11408, in 3.5.0), and has TryLock. The adapter itself is
// ../etcdlock; this file is only that client's calls.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"os"
	"time"

	"go.etcd.io/etcd/api/v3/version"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"go.uber.org/zap"

	"lockbench.invalid/etcdlock"
)

type client struct{ c *clientv3.Client }

type session struct {
	s *concurrency.Session
	m *concurrency.Mutex
}

func dial(endpoints []string, timeout time.Duration, tls *tls.Config) (etcdlock.Client, error) {
	c, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: timeout, TLS: tls, Logger: zap.NewNop()})
	if err != nil {
		return nil, err
	}
	return client{c}, nil
}

func (c client) NewSession(ctx context.Context, ttl int) (etcdlock.Session, error) {
	opts := []concurrency.SessionOption{concurrency.WithContext(ctx)}
	if ttl > 0 {
		opts = append(opts, concurrency.WithTTL(ttl))
	}
	s, err := concurrency.NewSession(c.c, opts...)
	if err != nil {
		return nil, err
	}
	return &session{s: s}, nil
}

func (c client) Close() error { return c.c.Close() }

func (s *session) Lease() int64          { return int64(s.s.Lease()) }
func (s *session) Done() <-chan struct{} { return s.s.Done() }
func (s *session) Close() error          { return s.s.Close() }

func (s *session) KeepAlive(ctx context.Context) (<-chan int64, error) {
	ka, err := s.s.Client().KeepAlive(ctx, s.s.Lease())
	if err != nil {
		return nil, err
	}
	ttl := make(chan int64, 4)
	go func() {
		defer close(ttl)
		for r := range ka {
			select {
			case ttl <- r.TTL:
			default: // not read in time: the next answer says it
			}
		}
	}()
	return ttl, nil
}

func (s *session) Lock(ctx context.Context, name string, try bool) (string, error) {
	s.m = concurrency.NewMutex(s.s, name)
	var err error
	if try {
		err = s.m.TryLock(ctx)
	} else {
		err = s.m.Lock(ctx)
	}
	return s.m.Key(), err
}

func (s *session) Unlock(ctx context.Context) error { return s.m.Unlock(ctx) }

func (s *session) Get(ctx context.Context, key string) (int64, int64, bool, error) {
	r, err := s.s.Client().Get(ctx, key)
	if err != nil || len(r.Kvs) == 0 {
		return 0, 0, false, err
	}
	return r.Kvs[0].CreateRevision, r.Kvs[0].Lease, true, nil
}

func main() {
	os.Exit(etcdlock.Main(etcdlock.Library{
		Client:  version.Version,
		CanTry:  true,
		Dial:    dial,
		Locked:  func(err error) bool { return errors.Is(err, concurrency.ErrLocked) },
		Expired: func(err error) bool { return errors.Is(err, concurrency.ErrSessionExpired) },
	}))
}
