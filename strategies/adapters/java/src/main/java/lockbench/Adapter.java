package lockbench;

import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.function.Supplier;

/**
 * lockbench's adapter for the Java lock libraries (docs/adapters.md,
 * docs/libraries/redisson.md, docs/libraries/curator.md):
 *
 *   lockbench-java LIBRARY [defaults] [--check]
 *
 * LIBRARY is one of the names below (the manifests strategies/adapters/*.adapter
 * give it). --check prints library=NAME version=V (read from the library's own
 * jar) and exits 0 when it loads. Without LOCKBENCH_ADAPTER_HOST it serves one
 * session on stdin and stdout; with it, every connection on that Unix socket
 * is a session of its own, a thread each, with its own library objects and
 * connections (docs/adapters.md, Adapter hosts).
 */
public final class Adapter {
    private Adapter() {
    }

    static Map<String, Supplier<Lib>> libraries(boolean defaults) {
        Map<String, Supplier<Lib>> m = new TreeMap<>();
        for (RedissonLib.Kind k : RedissonLib.Kind.values())
            m.put(k.program, () -> new RedissonLib(k, defaults));
        m.put("curator-mutex", () -> new CuratorLib(defaults, false));
        m.put("curator-mutex-fenced", () -> new CuratorLib(defaults, true));
        return m;
    }

    /** The version in a library's own jar (META-INF/maven/GROUP/ARTIFACT/pom.properties). */
    static String versionOf(String group, String artifact) {
        String res = "/META-INF/maven/" + group + "/" + artifact + "/pom.properties";
        try (InputStream s = Adapter.class.getResourceAsStream(res)) {
            if (s == null)
                return "unknown";
            Properties p = new Properties();
            p.load(s);
            return p.getProperty("version", "unknown");
        } catch (Exception e) {
            return "unknown";
        }
    }

    public static void main(String[] argv) throws Exception {
        List<String> args = Arrays.asList(argv);
        PrintStream stdout = System.out;
        System.setOut(System.err); // nothing a library prints may reach the protocol
        Map<String, Supplier<Lib>> libs = libraries(args.contains("defaults"));
        Supplier<Lib> make = args.isEmpty() ? null : libs.get(args.get(0));
        if (make == null) {
            stdout.println("unknown library '" + (args.isEmpty() ? "" : args.get(0)) + "': one of "
                    + String.join(", ", libs.keySet()));
            stdout.flush();
            System.exit(1);
        }
        if (args.contains("--check")) {
            try {
                Lib lib = make.get();
                String hello = lib.hello();
                stdout.println(hello.substring(0, hello.indexOf(" language=")) + " java="
                        + System.getProperty("java.version"));
                stdout.flush();
                System.exit(0);
            } catch (Throwable e) {
                stdout.println("cannot load the library (harness/deps.sh builds strategies/adapters/java): "
                        + Session.errorText(e));
                stdout.flush();
                System.exit(1);
            }
        }
        String host = System.getenv("LOCKBENCH_ADAPTER_HOST");
        if (host == null || host.isEmpty()) {
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.ISO_8859_1));
            new Session(in, stdout, make.get()).serve();
            stdout.flush();
            System.exit(0); // the libraries' threads are not daemons
        }
        serveHost(host, make);
    }

    /** An adapter host: a session a connection, each in a thread of its own. */
    private static void serveHost(String path, Supplier<Lib> make) throws Exception {
        ServerSocketChannel listener = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        listener.bind(UnixDomainSocketAddress.of(path), 4096);
        for (;;) {
            SocketChannel conn = listener.accept();
            Thread t = new Thread(() -> hosted(conn, make), "lockbench-host-session");
            t.setDaemon(true);
            t.start();
        }
    }

    private static void hosted(SocketChannel conn, Supplier<Lib> make) {
        try (conn) {
            /* the channel's own read and write, which may run at once (a notice
             * written while the reader waits): the streams of Channels take the
             * channel's one blocking lock for both */
            InputStream raw = new InputStream() {
                @Override
                public int read() throws IOException {
                    byte[] one = new byte[1];
                    return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
                }

                @Override
                public int read(byte[] b, int off, int len) throws IOException {
                    return conn.read(ByteBuffer.wrap(b, off, len));
                }
            };
            OutputStream out = new OutputStream() {
                @Override
                public void write(int b) throws IOException {
                    write(new byte[] { (byte) b }, 0, 1);
                }

                @Override
                public void write(byte[] b, int off, int len) throws IOException {
                    for (ByteBuffer buf = ByteBuffer.wrap(b, off, len); buf.hasRemaining();)
                        conn.write(buf);
                }
            };
            BufferedReader in = new BufferedReader(new InputStreamReader(raw, StandardCharsets.ISO_8859_1));
            new Session(in, out, make.get()).serve();
        } catch (Throwable e) { // this session's, not the host's: the others go on
            System.err.println("session: " + Session.errorText(e));
        }
    }
}
