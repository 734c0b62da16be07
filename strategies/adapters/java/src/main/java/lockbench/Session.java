package lockbench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * One session of the protocol: requests read from @in, one line each,
 * answered on @out in order. The reading thread takes hello and quit itself
 * and hands every other request to the worker thread, so that quit is read
 * and answered while an acquire still waits (wait=library): the library's
 * clients are shut down and the waiting request is abandoned.
 */
final class Session {
    private final BufferedReader in;
    private final OutputStream out;
    private final Lib lib;
    private final ExecutorService worker;
    private boolean closed;

    Session(BufferedReader in, OutputStream out, Lib lib) {
        this.in = in;
        this.out = out;
        this.lib = lib;
        this.worker = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "lockbench-session");
            t.setDaemon(true);
            return t;
        });
        lib.attach(this);
    }

    /** Write one whole line (answers and notices come from several threads). */
    synchronized void say(String line) {
        if (closed)
            return;
        try {
            out.write((line + "\n").getBytes(StandardCharsets.US_ASCII));
            out.flush();
        } catch (IOException e) { // lockbench has closed its end: nobody to answer
            closed = true;
        }
    }

    /** Serve until quit or the end of the input. */
    void serve() throws IOException {
        for (String raw; (raw = in.readLine()) != null;) {
            String[] words = raw.trim().split(" +");
            if (words[0].isEmpty())
                continue;
            if (words[0].equals("quit")) {
                stop();
                say("bye");
                synchronized (this) {
                    closed = true;
                }
                return;
            }
            if (words[0].equals("hello")) {
                say("hello 3 " + lib.hello());
                continue;
            }
            worker.execute(() -> {
                String reply = answer(words);
                if (reply != null) // null: the library wrote its answer itself (with a notice after it)
                    say(reply);
            });
        }
        stop();
    }

    private void stop() {
        lib.quit();
        worker.shutdownNow();
    }

    private String answer(String[] words) {
        try {
            switch (words[0]) {
            case "config":
                Map<String, String> cfg = new HashMap<>();
                for (int i = 1; i < words.length; i++) {
                    int eq = words[i].indexOf('=');
                    if (eq > 0)
                        cfg.put(words[i].substring(0, eq), words[i].substring(eq + 1));
                }
                return lib.config(cfg);
            case "acquire":
                return lib.acquire();
            case "release":
                return lib.release();
            case "extend":
                return words.length == 2 ? lib.extend(Long.parseLong(words[1])) : "error extend takes MS";
            default:
                return "error unknown request " + oneLine(words[0]);
            }
        } catch (Throwable e) {
            if (e instanceof InterruptedException)
                Thread.currentThread().interrupt();
            return "error " + errorText(e);
        }
    }

    /**
     * An exception as the text of an error reply, on one line: its type, then
     * its root cause's type and message (the reason, where Redisson wraps it in
     * two ExecutionExceptions whose messages repeat it), then its own message.
     */
    static String errorText(Throwable e) {
        Throwable root = e;
        for (int depth = 0; root.getCause() != null && root.getCause() != root && depth < 16; depth++)
            root = root.getCause();
        StringBuilder b = new StringBuilder(e.getClass().getSimpleName());
        if (root != e)
            b.append(" caused by ").append(root.getClass().getSimpleName()).append(": ")
                    .append(root.getMessage()).append(" | ").append(e.getMessage());
        else
            b.append(": ").append(e.getMessage());
        return oneLine(b.toString());
    }

    static String oneLine(String s) {
        StringBuilder b = new StringBuilder();
        for (char c : s.toCharArray())
            b.append(c < 0x20 || c > 0x7e ? ' ' : c);
        String t = b.toString().trim().replaceAll(" +", " ");
        return t.length() > 400 ? t.substring(0, 400) : t.isEmpty() ? "unknown error" : t;
    }
}
