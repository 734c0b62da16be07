// Package etcdlock is lockbench's adapter for etcd's own lock, run by etcd's
// own Go client: its concurrency package (a Session whose lease the client
// keeps alive, a Mutex on it). It speaks lockbench's adapter protocol,
// version 3 (docs/adapters.md), and nothing of etcd: the two programs beside
// it (client-3.4, client-3.5) give it one client version each, through the
// small interfaces below, and each of those is only calls of that client's
// public API.
//
//	acquire  concurrency.NewSession(client, WithTTL(ceil(ttl_ms/1000)))
//	         NewMutex(session, key); wait=one: TryLock (3.5), or Lock given
//	         window_ms (3.4 has no TryLock); wait=library: Lock until granted
//	         fenced: Get(Mutex.Key()): its create revision is the token
//	held     the session's own keep-alive; each of its answers, seen on a
//	         second KeepAlive channel of the same lease, is "extended ttl_ms=N";
//	         Session.Done() closing is "lost ..."
//	release  Get(Mutex.Key()) (still there, with our lease: released; else
//	         not-owned), Mutex.Unlock, Session.Close (revokes the lease)
//
// Nodes: nodes=http://HOST:PORT,... are the client's endpoints, all of them:
// the client balances its requests over them its own way. nodes=https://...
// (--etcd https://): the client speaks TLS to every member, with config's
// tls_ca=, tls_cert= and tls_key= (absolute paths, %XX-encoded) and
// tls_insecure=1 in its clientv3.Config.TLS; never plain text to an https://
// member.
package etcdlock

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Protocol is the adapter protocol version this speaks.
const Protocol = 3

// Etcd is the server lockbench starts (Debian's etcd-server).
const Etcd = "/usr/bin/etcd"

// Client is one etcd client (clientv3.Client).
type Client interface {
	// NewSession is concurrency.NewSession(client, WithTTL(ttl),
	// WithContext(ctx)): ctx is the session's life; ttl 0: the client's
	// default TTL (no WithTTL).
	NewSession(ctx context.Context, ttl int) (Session, error)
	Close() error
}

// Session is a concurrency.Session and the Mutex made on it.
type Session interface {
	Lease() int64
	Done() <-chan struct{}
	// KeepAlive is client.KeepAlive(ctx, Lease()): the TTL (s) of each
	// answer to the keep-alive the session's lease already has.
	KeepAlive(ctx context.Context) (<-chan int64, error)
	// Lock is NewMutex(session, name), then TryLock (try) or Lock; it
	// returns Mutex.Key().
	Lock(ctx context.Context, name string, try bool) (string, error)
	Unlock(ctx context.Context) error
	// Get is client.Get(ctx, key): its create revision and lease, and
	// whether it exists.
	Get(ctx context.Context, key string) (rev, lease int64, ok bool, err error)
	Close() error
}

// Library is one client version.
type Library struct {
	Client string // the client's version (its version.Version)
	CanTry bool   // its Mutex has TryLock
	// Dial is clientv3.New with these endpoints, DialTimeout and TLS (nil:
	// plain http:// endpoints).
	Dial    func(endpoints []string, dialTimeout time.Duration, tls *tls.Config) (Client, error)
	Locked  func(error) bool // TryLock's ErrLocked
	Expired func(error) bool // Lock's ErrSessionExpired (3.5 on): the waiter's key is gone
}

var versionRe = regexp.MustCompile(`etcd Version: (\S+)`)

func serverVersion() (string, error) {
	// runs: etcd (etcd-server)
	out, err := exec.Command(Etcd, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("cannot run %s --version (Debian package etcd-server): %v", Etcd, err)
	}
	m := versionRe.FindSubmatch(out)
	if m == nil {
		return "", fmt.Errorf("%s --version did not say its version", Etcd)
	}
	return string(m[1]), nil
}

// channel is one session's output: one whole line at a time, from any
// goroutine; nothing once closed.
type channel struct {
	mu     sync.Mutex
	w      io.Writer
	closed bool
}

func (c *channel) say(line string) {
	if c.closed {
		return
	}
	if _, err := io.WriteString(c.w, line+"\n"); err != nil {
		c.closed = true
	}
}

func (c *channel) sayLocked(line string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.say(line)
}

type adapter struct {
	lib      Library
	fence    bool
	defaults bool // the client's own session TTL (60 s), not ttl_ms
	window   time.Duration
	out      *channel
	server   string

	client    Client
	endpoints []string
	name      string
	ttl       int
	library   bool
	op        time.Duration // what one request may take: 2 x timeout_ms x nodes

	life context.Context // ended by quit
	end  context.CancelFunc

	// the acquire under way or the lock held (out.mu guards held)
	sess    Session
	stop    context.CancelFunc
	key     string
	held    bool
	renewed time.Time // the last keep-alive answer (out.mu)
	left    int64     // its TTL, s
}

func (a *adapter) log(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s etcd-lock: %s\n", time.Now().Format("15:04:05.000"), fmt.Sprintf(format, args...))
}

func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}

func (a *adapter) hello() string {
	return fmt.Sprintf("hello %d library=etcd-lock version=%s language=go extend=no lost=yes extends=reported"+
		" claims=MDFOL", Protocol, a.server)
}

func (a *adapter) config(words []string) (string, error) {
	cfg := map[string]string{}
	for _, w := range words {
		k, v, ok := strings.Cut(w, "=")
		if !ok {
			return "", fmt.Errorf("config: expected KEY=VALUE, got %q", w)
		}
		cfg[k] = v
	}
	for _, k := range []string{"nodes", "key", "ttl_ms", "wait", "timeout_ms"} {
		if cfg[k] == "" {
			return "", fmt.Errorf("config: %s= missing", k)
		}
	}
	ttl, err := strconv.Atoi(cfg["ttl_ms"])
	if err != nil || ttl < 1 {
		return "", fmt.Errorf("config: ttl_ms: expected a whole number of ms, got %q", cfg["ttl_ms"])
	}
	timeout, err := strconv.Atoi(cfg["timeout_ms"])
	if err != nil || timeout < 1 {
		return "", fmt.Errorf("config: timeout_ms: expected a whole number of ms, got %q", cfg["timeout_ms"])
	}
	a.endpoints = nil
	scheme := ""
	for _, n := range strings.Split(cfg["nodes"], ",") {
		u, err := url.Parse(n)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" ||
			u.Port() == "" || (u.Path != "" && u.Path != "/") {
			return "", fmt.Errorf("nodes: expected http://HOST:PORT or https://HOST:PORT, got %q", n)
		}
		if scheme != "" && u.Scheme != scheme {
			return "", fmt.Errorf("nodes: http:// and https:// members mixed (%q)", n)
		}
		scheme = u.Scheme
		a.endpoints = append(a.endpoints, u.Scheme+"://"+u.Host)
	}
	var tlsCfg *tls.Config
	if scheme == "https" {
		if tlsCfg, err = tlsConfig(cfg); err != nil {
			return "", err
		}
		if err = handshakes(a.endpoints, tlsCfg, time.Duration(timeout)*time.Millisecond); err != nil {
			return "", err
		}
	}
	a.name = cfg["key"]
	a.ttl = int(math.Ceil(float64(ttl) / 1000))
	if a.defaults {
		a.ttl = 0
	}
	a.library = cfg["wait"] == "library"
	a.op = 2 * time.Duration(timeout) * time.Duration(len(a.endpoints)) * time.Millisecond
	if a.client != nil {
		a.client.Close()
	}
	a.client, err = a.lib.Dial(a.endpoints, time.Duration(timeout)*time.Millisecond, tlsCfg)
	if err != nil {
		return "", err
	}
	return "ok", nil
}

// tlsConfig: the client's TLS settings from config's words (docs/adapters.md):
// the CA to check the members against (tls_ca=; without it the system's), a
// client certificate (tls_cert= and tls_key=), no check (tls_insecure=1).
func tlsConfig(cfg map[string]string) (*tls.Config, error) {
	path := func(k string) (string, error) {
		p, err := url.PathUnescape(cfg[k])
		if err != nil || !strings.HasPrefix(p, "/") {
			return "", fmt.Errorf("config: %s: expected an absolute path, %%XX-encoded, got %q", k, cfg[k])
		}
		return p, nil
	}
	c := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: cfg["tls_insecure"] == "1"}
	if cfg["tls_ca"] != "" {
		p, err := path("tls_ca")
		if err != nil {
			return nil, err
		}
		pem, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("tls_ca: %v", err)
		}
		c.RootCAs = x509.NewCertPool()
		if !c.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("tls_ca: %s holds no PEM certificate", p)
		}
	}
	if (cfg["tls_cert"] == "") != (cfg["tls_key"] == "") {
		return nil, errors.New("config: tls_cert= and tls_key= go together")
	}
	if cfg["tls_cert"] != "" {
		cert, err := path("tls_cert")
		if err != nil {
			return nil, err
		}
		key, err := path("tls_key")
		if err != nil {
			return nil, err
		}
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return nil, fmt.Errorf("tls_cert, tls_key: %v", err)
		}
		c.Certificates = []tls.Certificate{pair}
	}
	return c, nil
}

// handshakes: a TLS handshake with each member, with the client's settings
// and the member's name, and a GET /version through it, before the client is
// made: a certificate the
// settings do not accept (or a client certificate the member does not) is
// said now, in Go's words, where the client would only retry until its
// context ends. A member that does not answer is left to the client.
func handshakes(endpoints []string, c *tls.Config, timeout time.Duration) error {
	for _, e := range endpoints {
		u, _ := url.Parse(e)
		one := c.Clone()
		one.ServerName = u.Hostname()
		conn, err := tls.DialWithDialer(&net.Dialer{Timeout: timeout}, "tcp", u.Host, one)
		if err == nil {
			// TLS 1.3: a member that wants a client certificate says so after
			// the handshake, as its answer to the first request
			conn.SetDeadline(time.Now().Add(timeout))
			if _, err = conn.Write([]byte("GET /version HTTP/1.0\r\n\r\n")); err == nil {
				_, err = conn.Read(make([]byte, 1))
			}
			conn.Close()
		}
		if err == nil {
			continue
		}
		var verify *tls.CertificateVerificationError
		var header tls.RecordHeaderError
		var op *net.OpError // the member's alert: "remote error: tls: ..."
		if errors.As(err, &verify) || errors.As(err, &header) ||
			(errors.As(err, &op) && op.Op == "remote error") {
			return fmt.Errorf("%s: TLS: %s", e, oneLine(err))
		}
	}
	return nil
}

// newSession: a session whose grant may take a request's time at most; its
// life is stopped by release, quit or a failed attempt.
func (a *adapter) newSession() error {
	ctx, stop := context.WithCancel(context.Background()) // its own: quit ends a.life first, then revokes
	late := time.AfterFunc(a.op, stop)
	s, err := a.client.NewSession(ctx, a.ttl)
	if !late.Stop() && err == nil {
		err = errors.New("no lease granted within the request's time")
		go s.Close()
	}
	if err != nil {
		stop()
		return err
	}
	a.out.mu.Lock()
	a.sess, a.stop, a.key = s, stop, ""
	a.renewed, a.left = time.Now(), int64(max(a.ttl, 1))
	a.out.mu.Unlock()
	ka, err := s.KeepAlive(ctx)
	if err != nil {
		a.log("no second keep-alive channel for lease %x: %v", s.Lease(), err)
		ka = nil
	}
	go a.notices(s, ka)
	return nil
}

// notices: what the session's keep-alive says while its lock is held.
func (a *adapter) notices(s Session, ka <-chan int64) {
	for {
		select {
		case ttl, ok := <-ka:
			if !ok {
				ka = nil
				continue
			}
			a.out.mu.Lock()
			if a.sess == s {
				a.renewed, a.left = time.Now(), ttl
				if a.held {
					a.out.say(fmt.Sprintf("extended ttl_ms=%d", ttl*1000))
				}
			}
			a.out.mu.Unlock()
		case <-s.Done():
			a.out.mu.Lock()
			if a.sess == s && a.held {
				a.out.say(fmt.Sprintf("lost the session of lease %x is done (Session.Done()): its keep-alive ended", s.Lease()))
				a.held = false
			} else {
				a.log("session of lease %x done while not held", s.Lease())
			}
			a.out.mu.Unlock()
			return
		}
	}
}

// endSession: stop the session, revoking its lease (which deletes its key);
// with @wait, the answer waits for the revoke a request's time at most (a
// waiter's key left behind would queue the next attempt behind it), else not
// at all (a cut link must not hold the answer).
func (a *adapter) endSession(wait bool) {
	a.out.mu.Lock()
	s, stop := a.sess, a.stop
	a.sess, a.stop, a.key, a.held = nil, nil, "", false
	a.out.mu.Unlock()
	if s == nil {
		return
	}
	done := make(chan struct{})
	go func() {
		s.Close()
		stop()
		close(done)
	}()
	if wait {
		select {
		case <-done:
		case <-time.After(a.op):
		}
	}
}

func (a *adapter) acquire() (string, error) {
	if a.client == nil {
		return "", errors.New("acquire before config")
	}
	for {
		reply, again, err := a.acquireOnce()
		if !again {
			return reply, err
		}
	}
}

func (a *adapter) acquireOnce() (string, bool, error) {
	if err := a.newSession(); err != nil {
		return "", false, err
	}
	s := a.sess
	var key string
	var err error
	switch {
	case a.library:
		key, err = s.Lock(a.life, a.name, false)
	case a.lib.CanTry:
		ctx, cancel := context.WithTimeout(a.life, a.op)
		key, err = s.Lock(ctx, a.name, true)
		cancel()
	default:
		ctx, cancel := context.WithTimeout(a.life, a.window)
		key, err = s.Lock(ctx, a.name, false)
		if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			// the window ran out, whatever form the client gave its error
			// (a gRPC status when it ran out in the Txn): not granted in time
			err = errLocked
		}
		cancel()
	}
	if a.life.Err() != nil {
		return "", false, a.life.Err() // quit: the answer is never written
	}
	if err != nil {
		a.endSession(true)
		if errors.Is(err, errLocked) || a.lib.Locked(err) {
			return "busy", false, nil
		}
		if a.lib.Expired != nil && a.lib.Expired(err) {
			a.log("Lock: %v: the waiter's key went with its lease", err)
			return "busy", a.library, nil
		}
		return "", false, err
	}
	reply := fmt.Sprintf("acquired token=%x", s.Lease())
	if a.fence {
		ctx, cancel := context.WithTimeout(a.life, a.op)
		rev, lease, ok, err := s.Get(ctx, key)
		cancel()
		if err != nil {
			a.endSession(false)
			return "", false, err
		}
		if !ok || lease != s.Lease() {
			// Lock said yes and the key is not there: its lease ran out while
			// it waited (the 3.4 Mutex does not look again: etcd PR #11408)
			a.log("Lock returned %q, which no longer exists: no fencing token, not ours", key)
			a.endSession(true)
			return "busy", a.library, nil
		}
		reply += fmt.Sprintf(" fence=%d", rev)
	}
	// the lease is what etcd granted or last renewed: said at once; a session
	// already done is said at once after (Lock answered anyway)
	a.out.mu.Lock()
	defer a.out.mu.Unlock()
	a.key = key
	a.out.say(reply)
	select {
	case <-s.Done():
		a.out.say(fmt.Sprintf("lost the session of lease %x was done before Lock returned (Session.Done())", s.Lease()))
	default:
		left := a.left*1000 - time.Since(a.renewed).Milliseconds()
		a.out.say(fmt.Sprintf("extended ttl_ms=%d", max(1, left)))
		a.held = true
	}
	return "", false, nil
}

var errLocked = errors.New("locked")

func (a *adapter) release() (string, error) {
	a.out.mu.Lock()
	a.held = false
	s, key := a.sess, a.key
	a.out.mu.Unlock()
	defer a.endSession(false)
	if s == nil || key == "" {
		return "not-owned", nil
	}
	ctx, cancel := context.WithTimeout(a.life, a.op)
	defer cancel()
	_, lease, ok, err := s.Get(ctx, key)
	if err != nil {
		return "", err
	}
	if err := s.Unlock(ctx); err != nil {
		return "", err
	}
	if ok && lease == s.Lease() {
		return "released", nil
	}
	return "not-owned", nil
}

// quit: stop a wait, and let go of the session (its revoke given half a
// second: quit is answered within lockbench's 2 s, on a loaded machine too;
// a lease not revoked runs out by itself).
func (a *adapter) quit() {
	a.out.mu.Lock()
	s := a.sess
	a.held = false
	a.out.mu.Unlock()
	a.end()
	if s != nil {
		done := make(chan struct{})
		go func() {
			s.Close()
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(500 * time.Millisecond):
			a.log("quit: lease %x not revoked within 0.5 s: it runs out by itself", s.Lease())
		}
	}
}

func (a *adapter) answer(words []string) string {
	var reply string
	var err error
	switch words[0] {
	case "hello":
		reply = a.hello()
	case "config":
		reply, err = a.config(words[1:])
	case "acquire":
		reply, err = a.acquire()
		if err == nil && reply == "" {
			return "" // written with its notice
		}
	case "release":
		reply, err = a.release()
	case "extend":
		reply = "unsupported"
	default:
		reply = "error unknown request " + words[0]
	}
	if err != nil {
		if a.life.Err() != nil {
			return ""
		}
		return fmt.Sprintf("error %T: %s", err, oneLine(err))
	}
	return reply
}

// session: one session's requests from r, answers to w, until quit or end
// of file. Each request runs while the next lines are still read, so quit
// is answered at once even while an acquire waits (and that wait is
// abandoned: its answer never written).
func session(lib Library, fence, defaults bool, window time.Duration, server string, r io.Reader, w io.Writer) {
	life, end := context.WithCancel(context.Background())
	a := &adapter{lib: lib, fence: fence, defaults: defaults, window: window, out: &channel{w: w}, server: server, life: life, end: end}
	lines := make(chan []string, 16)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for words := range lines {
			reply := a.answer(words)
			if reply != "" {
				a.out.sayLocked(reply)
			}
		}
	}()
	in := bufio.NewScanner(r)
	in.Buffer(make([]byte, 4096), 1<<20)
	quit := false
	for in.Scan() {
		words := strings.Fields(in.Text())
		if len(words) == 0 {
			continue
		}
		if words[0] == "quit" {
			quit = true
			break
		}
		lines <- words
	}
	a.quit()
	a.out.mu.Lock()
	if quit {
		a.out.say("bye")
	}
	a.out.closed = true
	a.out.mu.Unlock()
	if a.client != nil {
		go a.client.Close()
	}
}

// Main runs the adapter program of @lib with the program's arguments.
func Main(lib Library) int {
	fence, check, window, client, defaults := false, false, 50*time.Millisecond, "", false
	for _, arg := range os.Args[1:] {
		switch {
		case arg == "defaults":
			defaults = true
		case strings.HasPrefix(arg, "client="):
			client = strings.TrimPrefix(arg, "client=")
		case arg == "--fence":
			fence = true
		case arg == "--check":
			check = true
		case strings.HasPrefix(arg, "window_ms="):
			ms, err := strconv.Atoi(strings.TrimPrefix(arg, "window_ms="))
			if err != nil || ms < 1 || ms > 60000 {
				fmt.Fprintf(os.Stderr, "%s: window_ms=N takes 1 to 60000, got %q\n", os.Args[0], arg)
				return 2
			}
			window = time.Duration(ms) * time.Millisecond
		default:
			fmt.Fprintf(os.Stderr, "%s: unknown argument %q (expected --fence, window_ms=N, client=V, defaults, --check)\n", os.Args[0], arg)
			return 2
		}
	}
	server, err := serverVersion()
	if err != nil {
		fmt.Println(err)
		return 1
	}
	if client != "" && client != lib.Client {
		fmt.Printf("%s was built with etcd's client %s, its manifest expects %s: run harness/deps.sh\n",
			os.Args[0], lib.Client, client)
		return 1
	}
	if check {
		fmt.Printf("library=etcd-lock version=%s client=%s\n", server, lib.Client)
		return 0
	}
	path := os.Getenv("LOCKBENCH_ADAPTER_HOST")
	if path == "" {
		session(lib, fence, defaults, window, server, os.Stdin, os.Stdout)
		return 0
	}
	// an adapter host: every connection on the socket is a session of its own
	l, err := net.Listen("unix", path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for {
		conn, err := l.Accept()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		go func() {
			defer conn.Close()
			session(lib, fence, defaults, window, server, conn, conn)
		}()
	}
}
