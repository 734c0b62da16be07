// Package proto is lockbench's adapter protocol (version 3, docs/adapters.md)
// for the Go Redis lock libraries beside it (redsync, bsm-redislock), and the
// go-redis v9 clients they are given, made from config as a user makes them
// (redis.ParseURL, redis.NewClient; redis.NewFailoverClient for Sentinel).
// Each program beside it is only its library's public calls, behind Lock.
//
// A request runs while the next lines are still read, so that quit is
// answered at once even while an acquire waits (that wait is abandoned, its
// answer never written). Neither library tells its holder that a lease ran
// out, so no program here ever writes "lost".
package proto

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Protocol is the adapter protocol version this speaks.
const Protocol = 3

// GoRedis is go-redis's module path: its version, as built, is said by --check.
const GoRedis = "github.com/redis/go-redis/v9"

// Config is what config said, and the go-redis clients made from it.
type Config struct {
	Key     string
	TTL     time.Duration
	Library bool          // wait=library: the library's own retries
	Timeout time.Duration // timeout_ms: each connection's dial, read and write timeout
	// Defaults: the program's argument "defaults" (lockbench bench, --adapter-arg
	// defaults): the library's own settings where it has them, not ttl_ms
	Defaults bool
	// Flags: the program's arguments among its Library's Flags
	Flags   map[string]bool
	Clients []redis.UniversalClient
}

// Lock is one session's lock, made by a library at config.
type Lock interface {
	// Acquire makes one attempt (wait=one) or waits the library's way
	// (wait=library): "acquired token=T [validity_ms=N]" or "busy".
	Acquire(ctx context.Context) (string, error)
	// Release: "released" or "not-owned".
	Release(ctx context.Context) (string, error)
	// Extend: "extended", "not-owned" or "unsupported".
	Extend(ctx context.Context, ttl time.Duration) (string, error)
}

// Library is one library's program.
type Library struct {
	Name   string   // its name in lockbench (library=)
	Module string   // its Go module path, whose version debug.ReadBuildInfo gives
	Extend bool     // it has an extend of its own
	Flags  []string // the arguments of its own it takes (Config.Flags)
	New    func(cfg *Config) (Lock, error)
}

// Version is @module's version as built into this program ("" if absent).
func Version(module string) string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	for _, d := range bi.Deps {
		if d.Path == module {
			if d.Replace != nil {
				return d.Replace.Version
			}
			return d.Version
		}
	}
	return ""
}

func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}

// decode is a %XX-encoded path of config (docs/adapters.md, TLS).
func decode(name, v string) (string, error) {
	s, err := url.PathUnescape(v)
	if err != nil || !strings.HasPrefix(s, "/") {
		return "", fmt.Errorf("config: %s: expected an absolute %%XX-encoded path, got %q", name, v)
	}
	return s, nil
}

// tlsOf adds config's TLS words to go-redis's own TLS config of a rediss://
// URL (ParseURL's: the server's name checked, TLS 1.2 at least).
func tlsOf(cfg map[string]string, t *tls.Config) error {
	if v, ok := cfg["tls_ca"]; ok {
		p, err := decode("tls_ca", v)
		if err != nil {
			return err
		}
		pem, err := os.ReadFile(p)
		if err != nil {
			return fmt.Errorf("tls_ca: %v", err)
		}
		t.RootCAs = x509.NewCertPool()
		if !t.RootCAs.AppendCertsFromPEM(pem) {
			return fmt.Errorf("tls_ca: no PEM certificate in %s", p)
		}
	}
	if v, ok := cfg["tls_cert"]; ok {
		cert, err := decode("tls_cert", v)
		if err != nil {
			return err
		}
		key, err := decode("tls_key", cfg["tls_key"])
		if err != nil {
			return err
		}
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return fmt.Errorf("tls_cert: %v", err)
		}
		t.Certificates = []tls.Certificate{pair}
	}
	if cfg["tls_insecure"] == "1" {
		t.InsecureSkipVerify = true
	}
	return nil
}

// clientOptions: a node URL as go-redis reads it, with the run's timeouts.
// go-redis retries a failed command 3 times by default (MaxRetries); once
// here, so that an attempt on a black-holed node (two read timeouts and a
// back-off) ends within the request's deadline, 2 x timeout_ms + 2 s.
func clientOptions(cfg map[string]string, node string, timeout time.Duration) (*redis.Options, error) {
	opt, err := redis.ParseURL(node)
	if err != nil {
		return nil, fmt.Errorf("nodes: %v", err)
	}
	if opt.TLSConfig != nil {
		if err := tlsOf(cfg, opt.TLSConfig); err != nil {
			return nil, err
		}
	}
	opt.DialTimeout, opt.ReadTimeout, opt.WriteTimeout = timeout, timeout, timeout
	opt.MaxRetries = 1
	return opt, nil
}

// sentinelClient: go-redis's own Sentinel client (NewFailoverClient), which
// asks the Sentinels for the primary named master=, with the primary's auth
// and database from the first node's URL and the Sentinels' own from
// sentinel_auth=.
func sentinelClient(cfg map[string]string, timeout time.Duration) (redis.UniversalClient, error) {
	first, err := clientOptions(cfg, strings.Split(cfg["nodes"], ",")[0], timeout)
	if err != nil {
		return nil, err
	}
	fo := &redis.FailoverOptions{
		MasterName: cfg["master"], SentinelAddrs: strings.Split(cfg["sentinels"], ","),
		Username: first.Username, Password: first.Password, DB: first.DB, TLSConfig: first.TLSConfig,
		DialTimeout: timeout, ReadTimeout: timeout, WriteTimeout: timeout, MaxRetries: 1,
	}
	if a, ok := cfg["sentinel_auth"]; ok {
		u, err := url.Parse(a)
		if err != nil || u.User == nil {
			return nil, fmt.Errorf("config: sentinel_auth: expected redis://[USER]:PASSWORD@HOST:PORT, got %q", a)
		}
		fo.SentinelUsername = u.User.Username()
		fo.SentinelPassword, _ = u.User.Password()
	}
	return redis.NewFailoverClient(fo), nil
}

func parseConfig(words []string) (*Config, error) {
	cfg := map[string]string{}
	for _, w := range words {
		k, v, ok := strings.Cut(w, "=")
		if !ok {
			return nil, fmt.Errorf("config: expected KEY=VALUE, got %q", w)
		}
		cfg[k] = v
	}
	for _, k := range []string{"nodes", "key", "ttl_ms", "wait", "timeout_ms"} {
		if cfg[k] == "" {
			return nil, fmt.Errorf("config: %s= missing", k)
		}
	}
	ttl, err := strconv.ParseInt(cfg["ttl_ms"], 10, 64)
	if err != nil || ttl < 1 || ttl > 365*24*3600*1000 {
		return nil, fmt.Errorf("config: ttl_ms: expected a whole number of ms, got %q", cfg["ttl_ms"])
	}
	timeout, err := strconv.ParseInt(cfg["timeout_ms"], 10, 64)
	if err != nil || timeout < 1 || timeout > 3600*1000 {
		return nil, fmt.Errorf("config: timeout_ms: expected a whole number of ms, got %q", cfg["timeout_ms"])
	}
	c := &Config{Key: cfg["key"], TTL: time.Duration(ttl) * time.Millisecond, Library: cfg["wait"] == "library",
		Timeout: time.Duration(timeout) * time.Millisecond}
	if cfg["sentinels"] != "" {
		cl, err := sentinelClient(cfg, c.Timeout)
		if err != nil {
			return nil, err
		}
		c.Clients = append(c.Clients, cl)
		return c, nil
	}
	for _, n := range strings.Split(cfg["nodes"], ",") {
		opt, err := clientOptions(cfg, n, c.Timeout)
		if err != nil {
			c.close()
			return nil, err
		}
		c.Clients = append(c.Clients, redis.NewClient(opt))
	}
	return c, nil
}

func (c *Config) close() {
	for _, cl := range c.Clients {
		cl.Close()
	}
}

// channel is one session's output: one whole line at a time; nothing once closed.
type channel struct {
	mu     sync.Mutex
	w      io.Writer
	closed bool
}

func (c *channel) say(line string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	if _, err := io.WriteString(c.w, line+"\n"); err != nil {
		c.closed = true
	}
}

type session struct {
	lib      Library
	defaults bool
	flags    map[string]bool
	hello    string
	cfg      *Config
	lock     Lock
	life     context.Context
	op       time.Duration // a request's time: 2 x timeout_ms x nodes
}

func (s *session) answer(words []string) string {
	var reply string
	var err error
	switch words[0] {
	case "hello":
		return s.hello
	case "config":
		if s.cfg != nil {
			s.cfg.close()
			s.cfg, s.lock = nil, nil
		}
		s.cfg, err = parseConfig(words[1:])
		if err == nil {
			s.cfg.Defaults, s.cfg.Flags = s.defaults, s.flags
			s.op = 2 * s.cfg.Timeout * time.Duration(len(s.cfg.Clients))
			if s.lock, err = s.lib.New(s.cfg); err != nil {
				s.cfg.close()
				s.cfg = nil
			}
		}
		reply = "ok"
	case "acquire", "release", "extend":
		if s.lock == nil {
			return "error " + words[0] + " before config"
		}
		reply, err = s.request(words)
	default:
		return "error unknown request " + words[0]
	}
	if s.life.Err() != nil {
		return "" // quit: the answer is never written
	}
	if err != nil {
		return fmt.Sprintf("error %T: %s", err, oneLine(err))
	}
	return reply
}

func (s *session) request(words []string) (string, error) {
	ctx := s.life
	if !(words[0] == "acquire" && s.cfg.Library) {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(s.life, s.op)
		defer cancel()
	}
	switch words[0] {
	case "acquire":
		return s.lock.Acquire(ctx)
	case "release":
		return s.lock.Release(ctx)
	}
	if !s.lib.Extend || len(words) != 2 {
		return "unsupported", nil
	}
	ms, err := strconv.ParseInt(words[1], 10, 64)
	if err != nil || ms < 1 || ms > 365*24*3600*1000 {
		return "", fmt.Errorf("extend: expected a whole number of ms, got %q", words[1])
	}
	return s.lock.Extend(ctx, time.Duration(ms)*time.Millisecond)
}

// serve: one session's requests from r, answers to w, until quit or end of file.
func serve(lib Library, defaults bool, flags map[string]bool, hello string, r io.Reader, w io.Writer) {
	life, end := context.WithCancel(context.Background())
	out := &channel{w: w}
	s := &session{lib: lib, defaults: defaults, flags: flags, hello: hello, life: life}
	lines := make(chan []string, 16)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for words := range lines {
			if reply := s.answer(words); reply != "" {
				out.say(reply)
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
	end()
	close(lines)
	select { // the request under way sees its context end; a library call that does not is left behind
	case <-done:
	case <-time.After(500 * time.Millisecond):
	}
	if quit {
		out.say("bye")
	}
	out.mu.Lock()
	out.closed = true
	out.mu.Unlock()
	if s.cfg != nil {
		go s.cfg.close()
	}
}

// Main runs the adapter program of @lib. Its arguments: version=V (the
// library version its manifest names: another one built in is unusable),
// claims=LETTERS (said in hello), defaults (Config.Defaults), --check, and
// the library's own Flags.
func Main(lib Library) int {
	check, defaults, want, claims, flags := false, false, "", "-", map[string]bool{}
	for _, arg := range os.Args[1:] {
		switch {
		case slices.Contains(lib.Flags, arg):
			flags[arg] = true
		case arg == "--check":
			check = true
		case arg == "defaults":
			defaults = true
		case strings.HasPrefix(arg, "version="):
			want = strings.TrimPrefix(arg, "version=")
		case strings.HasPrefix(arg, "claims="):
			claims = strings.TrimPrefix(arg, "claims=")
		default:
			fmt.Fprintf(os.Stderr, "%s: unknown argument %q (expected version=V, claims=LETTERS, defaults, --check%s)\n",
				os.Args[0], arg, strings.Join(append([]string{""}, lib.Flags...), ", "))
			return 2
		}
	}
	v := strings.TrimPrefix(Version(lib.Module), "v")
	if v == "" {
		fmt.Printf("%s was built without %s: run harness/deps.sh go\n", os.Args[0], lib.Module)
		return 1
	}
	if want != "" && want != v {
		fmt.Printf("%s was built with %s %s, its manifest expects %s: run harness/deps.sh go\n", os.Args[0], lib.Module, v, want)
		return 1
	}
	if check {
		fmt.Printf("library=%s version=%s go-redis=%s\n", lib.Name, v, strings.TrimPrefix(Version(GoRedis), "v"))
		return 0
	}
	extend := "no"
	if lib.Extend {
		extend = "yes"
	}
	hello := fmt.Sprintf("hello %d library=%s version=%s language=go extend=%s lost=no extends=never claims=%s",
		Protocol, lib.Name, v, extend, claims)
	path := os.Getenv("LOCKBENCH_ADAPTER_HOST")
	if path == "" {
		serve(lib, defaults, flags, hello, os.Stdin, os.Stdout)
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
			if errors.Is(err, net.ErrClosed) {
				return 0
			}
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		go func() {
			defer conn.Close()
			serve(lib, defaults, flags, hello, conn, conn)
		}()
	}
}
