package lockbench;

import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.redisson.Redisson;
import org.redisson.RedissonMultiLock;
import org.redisson.RedissonRedLock;
import org.redisson.api.RFencedLock;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.redisson.client.RedisTimeoutException;
import org.redisson.config.BaseConfig;
import org.redisson.config.Config;
import org.redisson.config.SentinelServersConfig;
import org.redisson.config.SingleServerConfig;

/**
 * Redisson's locks through its public API (org.redisson.api, Redisson.create,
 * Config), as its documentation shows them:
 *
 *   redisson-lock        RLock, lock() with no lease: the watchdog renews it
 *   redisson-lock-lease  RLock, lock(leaseTime): a fixed lease, no watchdog
 *   redisson-fenced-lock RFencedLock, lockAndGetToken(): the token is the fence
 *   redisson-fair-lock   RFairLock (getFairLock), watchdog
 *   redisson-multilock   RedissonMultiLock over one RLock on each of 5 nodes (all of them)
 *   redisson-redlock     RedissonRedLock (deprecated) over the same: a majority
 *
 * wait=one is tryLock() (tryLock(0, lease) for the fixed lease,
 * tryLockAndGetToken(0, unit) for the fenced lock): one attempt; wait=library is
 * lock() (lockAndGetToken()), which waits on the lock's channel for ever.
 *
 * The lease: ttl_ms is Config.setLockWatchdogTimeout (the watchdog's lease,
 * renewed every third of it) or the fixed lease; the network timeout of config
 * is Redisson's timeout and connectTimeout, with retryAttempts 0 (one
 * attempt: Redisson's own 4 retries, 1 to 2 s apart, would outlast
 * lockbench's deadline on a black-holed node). With the adapter argument
 * "defaults" none of that is set: Redisson's own (watchdog 30 s, timeout
 * 3 s, connectTimeout 10 s, retryAttempts 4), and a fixed lease of ttl_ms.
 *
 * Redisson says nothing to its holder when the watchdog cannot renew (it
 * logs "Can't update lock ... expiration"): lost=no. A release of a lock no
 * longer held throws IllegalMonitorStateException: not-owned.
 */
final class RedissonLib implements Lib {
    enum Kind {
        LOCK("redisson-lock", true),
        LEASE("redisson-lock-lease", false),
        FENCED("redisson-fenced-lock", true),
        FAIR("redisson-fair-lock", true),
        MULTI("redisson-multilock", true),
        REDLOCK("redisson-redlock", true);

        final String program;
        final boolean watchdog;

        Kind(String program, boolean watchdog) {
            this.program = program;
            this.watchdog = watchdog;
        }
    }

    /**
     * The least connectTimeout: Redisson.create's first connection in a new JVM
     * loads and starts netty's pipeline and Redisson's codecs inside it, and at
     * the test suite's network timeout of 500 ms on the 2-core machine under load
     * every Redisson lock's config was refused (RedisConnectionException:
     * TimeoutException) while 2000 ms passed. A request's own timeout stays the
     * network timeout; a refused connection is refused at once whatever this is.
     */
    private static final int CONNECT_FLOOR_MS = 2000;

    private final Kind kind;
    private final boolean defaults;
    private final List<RedissonClient> clients = new ArrayList<>();
    private RLock lock;
    private long ttl;
    private boolean blocking;

    RedissonLib(Kind kind, boolean defaults) {
        this.kind = kind;
        this.defaults = defaults;
        Redisson.class.getName(); // --check: the library loads
    }

    @Override
    public String hello() {
        String claims = kind == Kind.LEASE ? "MDO" : kind == Kind.REDLOCK ? "MDFOL" : "MDOL";
        return "library=redisson version=" + Adapter.versionOf("org.redisson", "redisson")
                + " language=java extend=no lost=no extends=" + (kind.watchdog ? "silently" : "never")
                + " claims=" + claims;
    }

    @Override
    public String config(Map<String, String> cfg) throws Exception {
        ttl = Long.parseLong(cfg.get("ttl_ms"));
        int timeout = Integer.parseInt(cfg.get("timeout_ms"));
        blocking = "library".equals(cfg.get("wait"));
        String key = cfg.get("key");
        String[] nodes = cfg.getOrDefault("nodes", "").split(",");
        boolean multi = kind == Kind.MULTI || kind == Kind.REDLOCK;
        int n = multi ? nodes.length : 1;
        for (int i = 0; i < n; i++)
            clients.add(create(clientConfig(nodes[i], cfg, timeout)));
        switch (kind) {
        case FENCED:
            lock = clients.get(0).getFencedLock(key);
            break;
        case FAIR:
            lock = clients.get(0).getFairLock(key);
            break;
        case MULTI:
        case REDLOCK:
            RLock[] each = new RLock[n];
            for (int i = 0; i < n; i++)
                each[i] = clients.get(i).getLock(key);
            lock = kind == Kind.MULTI ? new RedissonMultiLock(each) : redLock(each);
            break;
        default:
            lock = clients.get(0).getLock(key);
        }
        return "ok";
    }

    /**
     * Redisson.create, once more (twice at most) when its connection's first
     * PING timed out: in a new JVM that PING runs Redisson's codecs and netty's
     * pipeline for the first time, and at the test suite's 500 ms network
     * timeout on the 2-core machine under make check's load it timed out in 3
     * of 5 runs of the contract tests (RedisConnectionException caused by
     * RedisTimeoutException: Command execution timeout for command: (PING)),
     * never on the second try. What a service does at its start; a refused
     * connection or a wrong password is not retried.
     */
    private static RedissonClient create(Config c) {
        for (int attempt = 1;; attempt++) {
            try {
                return Redisson.create(c);
            } catch (RuntimeException e) {
                Throwable root = e;
                while (root.getCause() != null && root.getCause() != root)
                    root = root.getCause();
                if (attempt >= 3 || !(root instanceof RedisTimeoutException))
                    throw e;
            }
        }
    }

    @SuppressWarnings("deprecation")
    private static RLock redLock(RLock[] each) {
        return new RedissonRedLock(each);
    }

    /** One node's client: the URL's address, user, password and database. */
    private Config clientConfig(String url, Map<String, String> cfg, int timeout) {
        Config c = new Config();
        if (!defaults && kind.watchdog)
            c.setLockWatchdogTimeout(ttl);
        URI u = URI.create(url);
        BaseConfig<?> base;
        String db = u.getPath() == null ? "" : u.getPath().replace("/", "");
        if (cfg.containsKey("sentinels")) {
            SentinelServersConfig s = c.useSentinelServers().setMasterName(cfg.get("master"))
                    .setCheckSentinelsList(false);
            for (String hp : cfg.get("sentinels").split(","))
                s.addSentinelAddress("redis://" + hp);
            if (!db.isEmpty())
                s.setDatabase(Integer.parseInt(db));
            base = s;
        } else {
            SingleServerConfig s = c.useSingleServer().setAddress("redis://" + u.getHost() + ":" + u.getPort())
                    .setConnectionMinimumIdleSize(1).setConnectionPoolSize(4);
            if (!db.isEmpty())
                s.setDatabase(Integer.parseInt(db));
            base = s;
        }
        String info = u.getRawUserInfo();
        if (info != null) {
            int colon = info.indexOf(':');
            String user = colon < 0 ? info : info.substring(0, colon);
            if (!user.isEmpty())
                base.setUsername(URLDecoder.decode(user, StandardCharsets.UTF_8));
            if (colon >= 0)
                base.setPassword(URLDecoder.decode(info.substring(colon + 1), StandardCharsets.UTF_8));
        }
        if (!defaults)
            base.setTimeout(timeout).setConnectTimeout(Math.max(timeout, CONNECT_FLOOR_MS)).setRetryAttempts(0);
        return c;
    }

    @Override
    public String acquire() throws Exception {
        if (kind == Kind.FENCED) {
            RFencedLock f = (RFencedLock) lock;
            /* one attempt is tryLockAndGetToken(0, unit): the no-argument
             * tryLockAndGetToken() waits for ever while another holds the lock
             * (its wait time -1 is taken as no limit, RedissonFencedLock.java),
             * although its javadoc says it tries (docs/libraries/redisson.md) */
            Long token = blocking ? f.lockAndGetToken() : f.tryLockAndGetToken(0, TimeUnit.MILLISECONDS);
            return token == null ? "busy" : "acquired token=" + holder() + " fence=" + token;
        }
        boolean got;
        if (kind == Kind.LEASE) {
            if (blocking) {
                lock.lock(ttl, TimeUnit.MILLISECONDS);
                got = true;
            } else {
                got = lock.tryLock(0, ttl, TimeUnit.MILLISECONDS);
            }
        } else if (blocking) {
            lock.lock();
            got = true;
        } else {
            got = lock.tryLock();
        }
        if (!got)
            return "busy";
        return kind == Kind.MULTI || kind == Kind.REDLOCK ? "acquired" : "acquired token=" + holder();
    }

    /** The hash field the lock's script writes: the client's id and the thread's (RLock's owner). */
    private String holder() {
        return clients.get(0).getId() + ":" + Thread.currentThread().getId();
    }

    @Override
    public String release() throws Exception {
        try {
            lock.unlock();
            return "released";
        } catch (IllegalMonitorStateException e) { // not locked by this thread any more
            return "not-owned";
        }
    }

    @Override
    public void quit() {
        for (RedissonClient c : clients) {
            try {
                c.shutdown(0, 2, TimeUnit.SECONDS);
            } catch (Throwable e) { // leaving anyway
                System.err.println("quit: " + Session.errorText(e));
            }
        }
    }
}
