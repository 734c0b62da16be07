package lockbench;

import java.net.URI;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.data.Stat;

/**
 * Apache Curator's InterProcessMutex on lockbench's ZooKeeper ensemble, through
 * its public API as Curator's documentation shows it: CuratorFrameworkFactory
 * .newClient(connectString, sessionTimeoutMs, connectionTimeoutMs, retryPolicy),
 * start(), blockUntilConnected, a ConnectionStateListener, new
 * InterProcessMutex(client, path), acquire(time, unit) / acquire(), release(),
 * getParticipantNodes(), checkExists(), close().
 *
 * The lease is the ZooKeeper session (sessionTimeoutMs: ttl_ms here; Curator's
 * default 60 s, with a 15 s connection timeout), kept alive by the ZooKeeper
 * client's pings while the process runs (extends=silently), and a paused
 * process's runs out. The retry policy is the one Curator's README shows,
 * ExponentialBackoffRetry(1000, 3), with lockbench's network timeout as the
 * connection timeout. wait=one is acquire(0, MILLISECONDS): one attempt (its
 * node is made and, if not the lowest, deleted again); wait=library is
 * acquire(), for ever.
 *
 * lost: Curator's documentation (the "Error handling" of its recipes) tells a
 * lock holder to watch connection state: on SUSPENDED it can no longer be sure
 * it holds the lock, on LOST it does not. Both are passed on as lost while
 * held; one between Curator's grant and the answer is said at once after it.
 *
 * release: the adapter first looks for its node (the lowest participant,
 * created by this session: ephemeralOwner); gone or another's is not-owned.
 * Curator's release deletes its node path and retries; a NoNode there is
 * swallowed by it (guaranteed delete), so it cannot tell.
 *
 * token= is the lock node's sequence; with fence, fence= is its czxid (the zxid that made it),
 * which grows from holder to holder.
 */
final class CuratorLib implements Lib {
    private final boolean defaults, fence;
    private CuratorFramework client;
    private InterProcessMutex mutex;
    private boolean blocking;
    private Session out;
    private final Object state = new Object();
    private boolean held, granting;
    private ConnectionState dropped;

    CuratorLib(boolean defaults, boolean fence) {
        this.defaults = defaults;
        this.fence = fence;
        InterProcessMutex.class.getName(); // --check: the library loads
    }

    @Override
    public void attach(Session s) {
        out = s;
    }

    @Override
    public String hello() {
        return "library=curator version=" + Adapter.versionOf("org.apache.curator", "curator-recipes")
                + " language=java extend=no lost=yes extends=silently claims=MDFOL";
    }

    @Override
    public String config(Map<String, String> cfg) throws Exception {
        List<String> hosts = new ArrayList<>();
        for (String url : cfg.getOrDefault("nodes", "").split(",")) {
            URI u = URI.create(url);
            if (!"zk".equals(u.getScheme()) || u.getHost() == null || u.getPort() < 0)
                return "error nodes: expected zk://HOST:PORT, got " + Session.oneLine(url);
            hosts.add(u.getHost() + ":" + u.getPort());
        }
        int timeout = Integer.parseInt(cfg.get("timeout_ms"));
        /* the session: ttl_ms, not below ZooKeeper's least (2 x tickTime: 1 s here) */
        int session = defaults ? 60000 : Math.max(Integer.parseInt(cfg.get("ttl_ms")), 1000);
        client = CuratorFrameworkFactory.builder().connectString(String.join(",", hosts))
                .sessionTimeoutMs(session).connectionTimeoutMs(defaults ? 15000 : timeout)
                .retryPolicy(new ExponentialBackoffRetry(1000, 3)).build();
        client.getConnectionStateListenable().addListener((c, s) -> changed(s));
        client.start();
        if (!client.blockUntilConnected(Math.max(timeout, 5000), TimeUnit.MILLISECONDS))
            return "error not connected to ZooKeeper within " + Math.max(timeout, 5000) + " ms";
        mutex = new InterProcessMutex(client, "/lockbench/" + cfg.get("key").replace('/', '_'));
        blocking = "library".equals(cfg.get("wait"));
        return "ok";
    }

    private void changed(ConnectionState s) {
        System.err.println("curator: connection state " + s);
        if (s != ConnectionState.SUSPENDED && s != ConnectionState.LOST)
            return;
        synchronized (state) {
            if (held) {
                held = false;
                out.say("lost curator connection " + s + ": the session, and the lock node, may be gone");
            } else if (granting && dropped == null) {
                dropped = s;
            }
        }
    }

    /** The lowest participant (the holder's node) and its Stat, when this session made it. */
    private Object[] myNode() throws Exception {
        Collection<String> nodes = mutex.getParticipantNodes();
        if (nodes.isEmpty())
            return null;
        String first = nodes.iterator().next();
        Stat st = client.checkExists().forPath(first);
        long session = client.getZookeeperClient().getZooKeeper().getSessionId();
        return st != null && st.getEphemeralOwner() == session ? new Object[] { first, st } : null;
    }

    @Override
    public String acquire() throws Exception {
        boolean got = blocking ? acquireForever() : mutex.acquire(0, TimeUnit.MILLISECONDS);
        if (!got)
            return "busy";
        synchronized (state) {
            granting = true;
            dropped = client.getZookeeperClient().isConnected() ? null : ConnectionState.SUSPENDED;
        }
        try {
            String reply = "acquired";
            Object[] mine = myNode();
            if (mine != null) {
                String path = (String) mine[0];
                reply += " token=" + path.substring(path.length() - 10);
                if (fence)
                    reply += " fence=" + ((Stat) mine[1]).getCzxid();
            } else if (fence) { // no token to fence with: give the lock back
                mutex.release();
                return "error the lock node is gone already: no fencing token";
            }
            synchronized (state) {
                out.say(reply);
                if (dropped != null)
                    out.say("lost curator connection " + dropped + " after the grant: the lock node may be gone");
                else
                    held = true;
            }
            return null;
        } finally {
            synchronized (state) {
                granting = false;
            }
        }
    }

    private boolean acquireForever() throws Exception {
        mutex.acquire();
        return true;
    }

    @Override
    public String release() throws Exception {
        synchronized (state) {
            held = false;
        }
        Object[] mine;
        try {
            mine = myNode();
        } catch (Exception e) {
            mutex.release();
            throw e;
        }
        mutex.release();
        return mine != null ? "released" : "not-owned";
    }

    @Override
    public void quit() {
        synchronized (state) {
            held = false;
        }
        if (client != null)
            client.close(); // closes the session: its ephemeral nodes go with it
    }
}
