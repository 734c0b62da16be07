'use strict';
/*
 * protocol.js - lockbench's adapter protocol, version 2 (docs/adapters.md), for
 * the Node lock libraries: one line in on stdin, one line out on stdout. Each
 * library module (libs/*.js) says how to configure, acquire, release and
 * extend with that library's public API; this file does the rest, once.
 *
 * A library module exports:
 *   library, version    what `hello` and `--check` report
 *   extend, lost        booleans for `hello`
 *   extends             'never' (the lease is only what acquire and extend set)
 *                       or 'silently' (the library extends it by itself, and
 *                       its public API does not say when)
 *   config(cfg, ctx)    cfg: the parsed `config` line plus cfg.defaults (the
 *                       `defaults` adapter argument) and cfg.tls (its TLS
 *                       words, tlsWords; tlsOptions(cfg.tls, url) gives
 *                       Node's tls.connect options); ctx.lost(msg) sends a
 *                       lost notice, ctx.redis(url, timeoutMs) makes an
 *                       ioredis client the way the libraries document it
 *   acquire()           -> { token, validity_ms } when held, null when busy;
 *                       throws on an error (a node unreachable)
 *   release()           -> true (released) or false (not-owned)
 *   extend(ms)          -> true or false (not-owned)
 *   close()             disconnects
 */

const PROTOCOL = 2;

function oneLine(text) {
  return String(text).split(/\s+/).filter(Boolean).join(' ').slice(0, 400) || 'unknown error';
}

function errorText(e) {
  if (!e) return 'unknown error';
  const name = e.name || (e.constructor && e.constructor.name) || 'Error';
  let cause = '';
  if (e.cause && e.cause.message) cause = ' (' + e.cause.message + ')';
  return oneLine(name + ': ' + (e.message || e) + cause);
}

/* An ioredis client as the libraries' READMEs make it, with lockbench's
 * network timeout so that a black-holed node gives an error, not a hang. On a
 * Sentinel deployment (@sentinel: {sentinels, name}) it is ioredis's own
 * Sentinel client, as its README shows: it asks the Sentinels for the
 * primary named name, and again on reconnect and on READONLY. */
function makeRedis(url, timeoutMs, sentinel, tls) {
  const Redis = require('ioredis');
  const opts = {
    connectTimeout: timeoutMs,
    commandTimeout: timeoutMs,
    maxRetriesPerRequest: 1,
  };
  /* rediss://: ioredis's own TLS option, handed to Node's tls.connect */
  const secure = tlsOptions(tls, url);
  if (secure) opts.tls = secure;
  /* behind Sentinels, the primary's AUTH and database (--master-auth) are
   * those of the URL lockbench names for it */
  const u = sentinel ? new URL(url) : null;
  const auth = u ? {
    username: u.username ? decodeURIComponent(u.username) : undefined,
    password: u.password ? decodeURIComponent(u.password) : undefined,
    db: Number(u.pathname.replace(/\//g, '') || 0),
  } : {};
  const client = sentinel
    ? new Redis({ ...opts, ...auth, sentinels: sentinel.sentinels, name: sentinel.name })
    : new Redis(url, opts);
  client.on('error', (e) => process.stderr.write('ioredis: ' + errorText(e) + '\n'));
  return client;
}

/* config's TLS words (docs/adapters.md, only with rediss:// nodes:
 * tls_ca=PATH tls_cert=PATH tls_key=PATH tls_insecure=1, each path absolute
 * and %XX-encoded) as { ca, cert, key, insecure }, the paths decoded. */
function tlsWords(cfg) {
  const path = (w) => (cfg[w] ? decodeURIComponent(cfg[w]) : undefined);
  return { ca: path('tls_ca'), cert: path('tls_cert'), key: path('tls_key'),
    insecure: cfg.tls_insecure === '1' };
}

/* For a rediss:// @url, the options of Node's tls.connect that ioredis
 * (tls:) and node-redis (socket: { tls: true, ... }, and 3's tls:) take: the
 * CA, the client certificate and key read from their files, and whether the
 * server's certificate is checked (Node checks its name too); null for a
 * redis:// URL. */
function tlsOptions(tls, url) {
  if (!/^rediss:\/\//i.test(String(url)) || !tls) return null;
  const fs = require('fs');
  const out = { rejectUnauthorized: !tls.insecure };
  for (const k of ['ca', 'cert', 'key']) if (tls[k]) out[k] = fs.readFileSync(tls[k]);
  return out;
}

/* The installed version of npm package @pkg (read from its package.json:
 * some packages do not export it to require()). */
function versionOf(pkg) {
  const file = require('path').join(__dirname, 'node_modules', pkg, 'package.json');
  return JSON.parse(require('fs').readFileSync(file, 'utf8')).version.replace(/^v/, '');
}

function check(lib) {
  try {
    const m = lib();
    process.stdout.write(`library=${m.library} version=${m.version} node=${process.versions.node}\n`);
    return 0;
  } catch (e) {
    process.stdout.write(`cannot load the library (npm ci in strategies/adapters/node): ${errorText(e)}\n`);
    return 1;
  }
}

/* Split a stream's bytes into lines and hand each to @onLine, as they come:
 * one string per chunk, no line-reader machinery (readline) on the way. */
function lines(stream, onLine, onEnd) {
  let rest = '';
  stream.setEncoding('latin1');
  stream.on('data', (chunk) => {
    let start = 0, nl;
    while ((nl = chunk.indexOf('\n', start)) >= 0) {
      onLine(rest + chunk.slice(start, nl));
      rest = '';
      start = nl + 1;
    }
    rest += chunk.slice(start);
  });
  stream.on('end', onEnd);
  stream.on('close', onEnd);
}

/* Serve the protocol for the library module @load returns: on stdin and
 * stdout, one session; or, in an adapter host (the environment's
 * LOCKBENCH_ADAPTER_HOST names its Unix socket), every connection on that
 * socket as a session of its own, each with a library module of its own
 * (@load() again: its own clients and locks, as a process of its own would
 * have; docs/adapters.md, Adapter hosts). */
function serve(load, args) {
  if (args.includes('--check')) {
    process.exitCode = check(load);
    return;
  }
  const hostPath = process.env.LOCKBENCH_ADAPTER_HOST;
  if (!hostPath) {
    /* lockbench gone (the run ended, or it died): its end of the pipe is closed,
     * and there is nobody left to answer; leave quietly rather than print an
     * unhandled EPIPE into the adapter's log */
    process.stdout.on('error', (e) => process.exit(e && e.code === 'EPIPE' ? 0 : 1));
    session(load(), args, process.stdin, (line) => process.stdout.write(line + '\n'),
      () => process.exit(0));
    return;
  }
  const server = require('net').createServer((sock) => {
    sock.on('error', (e) => process.stderr.write('session: ' + errorText(e) + '\n'));
    let lib;
    try {
      lib = load();
    } catch (e) {
      process.stderr.write('session: cannot load the library: ' + errorText(e) + '\n');
      sock.destroy();
      return;
    }
    session(lib, args, sock, (line) => { if (!sock.destroyed) sock.write(line + '\n'); },
      () => sock.destroy());
  });
  server.on('error', (e) => {
    process.stderr.write('adapter host: ' + errorText(e) + '\n');
    process.exit(1);
  });
  server.listen({ path: hostPath, backlog: 4096 });
}

/* One session: the requests read from @input, answered through @say, in
 * order; @leave() when it ends (quit, or the end of @input). */
function session(lib, args, input, say, leave) {
  const made = [];
  let sentinel = null; /* config's sentinels= and master=, when the primary is found through them */
  let tls = null;      /* config's TLS words (tlsWords), for rediss:// nodes */
  let over = false;
  const ctx = {
    lost: (msg) => say('lost ' + oneLine(msg)),
    redis: (url, timeoutMs) => {
      const c = makeRedis(url, timeoutMs, sentinel, tls);
      made.push(c);
      return c;
    },
  };
  /* `ok` to config means connected: wait (at most the network timeout) until
   * each client is ready, so that the run's clock starts with every library
   * able to send at once */
  const connected = (timeoutMs) => Promise.all(made.map((c) => c.status === 'ready' ? null :
    new Promise((resolve) => {
      const t = setTimeout(resolve, timeoutMs);
      const done = () => { clearTimeout(t); resolve(); };
      c.once('ready', done);
      c.once('end', done);
    })));
  let chain = Promise.resolve();
  /* quit: the library's connections closed, then leave; the end of the
   * input: leave at once (nobody is there to wait for) */
  const end = async (quitting) => {
    if (over) return;
    over = true;
    /* a session that ends before its config has nothing to close: a close that
     * throws must not take the other sessions of a host down */
    const closed = Promise.resolve().then(() => lib.close && lib.close()).catch(() => {});
    if (quitting) await closed;
    leave();
  };

  async function handle(words) {
    const cmd = words[0];
    try {
      switch (cmd) {
        case 'hello':
          say(`hello ${PROTOCOL} library=${lib.library} version=${lib.version} language=node ` +
              `extend=${lib.extend ? 'yes' : 'no'} lost=${lib.lost ? 'yes' : 'no'} extends=${lib.extends || 'silently'}`);
          break;
        case 'config': {
          const cfg = {};
          for (const w of words.slice(1)) {
            const eq = w.indexOf('=');
            if (eq > 0) cfg[w.slice(0, eq)] = w.slice(eq + 1);
          }
          cfg.nodes = (cfg.nodes || '').split(',').filter(Boolean);
          if (cfg.sentinels) {
            sentinel = {
              name: cfg.master,
              sentinels: cfg.sentinels.split(',').map((hp) => {
                const colon = hp.lastIndexOf(':');
                return { host: hp.slice(0, colon), port: parseInt(hp.slice(colon + 1), 10) };
              }),
            };
          }
          tls = cfg.tls = tlsWords(cfg);
          cfg.ttl_ms = parseInt(cfg.ttl_ms, 10);
          cfg.timeout_ms = parseInt(cfg.timeout_ms, 10);
          cfg.defaults = args.includes('defaults');
          await lib.config(cfg, ctx);
          await connected(cfg.timeout_ms);
          say('ok');
          break;
        }
        case 'acquire': {
          const got = await lib.acquire();
          if (!got) {
            say('busy');
            break;
          }
          let line = 'acquired';
          if (got.token) line += ' token=' + oneLine(got.token).replace(/ /g, '_');
          if (Number.isFinite(got.validity_ms)) line += ' validity_ms=' + Math.max(0, Math.floor(got.validity_ms));
          say(line);
          break;
        }
        case 'release':
          say((await lib.release()) ? 'released' : 'not-owned');
          break;
        case 'extend':
          if (!lib.extend) say('unsupported');
          else say((await lib.extend(parseInt(words[1], 10))) ? 'extended' : 'not-owned');
          break;
        case 'quit':
          say('bye');
          await end(true);
          break;
        default:
          say('error unknown request ' + oneLine(cmd));
      }
    } catch (e) {
      say('error ' + errorText(e));
    }
  }

  /* requests are answered in order, one at a time */
  lines(input, (raw) => {
    const words = raw.split(' ').filter(Boolean);
    if (words.length && !over) chain = chain.then(() => handle(words));
  }, () => { chain = chain.then(() => end(false)); });
}

/*
 * Hold a lock through a library's `using(routine)`: the form its README
 * recommends, the one that extends the lease while the routine runs and tells
 * it through an AbortSignal when the lease is lost. start(routine) calls the
 * library's using. Returns the handle to release later; the promise resolves
 * when the routine is entered (held) and rejects when the acquire failed.
 */
function holdWith(start, ctx) {
  let letGo;
  const done = new Promise((resolve) => { letGo = resolve; });
  let entered;
  const held = new Promise((resolve) => { entered = resolve; });
  const run = start(async (signal) => {
    if (signal) {
      signal.addEventListener('abort', () =>
        ctx.lost('the library aborted the routine: ' + errorText(signal.error || signal.reason)));
    }
    entered(true);
    await done;
  });
  /* the acquire failed (run rejects before the routine), or the routine was entered */
  const outcome = Promise.race([held, run.then(() => false)]);
  return {
    held: outcome,
    run,
    async release() {
      letGo();
      await run;
    },
  };
}

/* The value a library's using() wrote, which its API does not hand out: its
 * public acquire() returns the lock with its value, and using() takes its
 * lock through it, so watching this instance's acquire() sees the value the
 * routine holds. The lock is the library's own; nothing is changed, and if a
 * version stops going through acquire() the value is simply not known (the
 * protocol's token= is left out and the servers' foreign releases read n/a). */
function watchValue(obj) {
  const seen = { value: null };
  const acquire = obj.acquire.bind(obj);
  obj.acquire = async (...args) => {
    const lock = await acquire(...args);
    seen.value = lock && lock.value !== undefined ? String(lock.value) : null;
    return lock;
  };
  return seen;
}

/* true when @fn succeeds, false when it throws an @ErrorClass (the library's
 * "not yours any more"); any other error goes on up. */
async function falseOn(ErrorClass, fn) {
  try {
    await fn();
    return true;
  } catch (e) {
    if (e instanceof ErrorClass) return false;
    throw e;
  }
}

module.exports = { serve, holdWith, errorText, makeRedis, versionOf, falseOn, watchValue, tlsOptions };
