package lockbench;

import java.util.Map;

/**
 * One library behind lockbench's adapter protocol (docs/adapters.md): a
 * method per request, each returning its reply line. A session makes one
 * (Adapter.make), so each session has its own library objects and
 * connections, as a process of its own would. Every request but hello and
 * quit runs on the session's one worker thread: Redisson's and Curator's
 * locks belong to the thread that took them, and so release runs where
 * acquire ran.
 */
interface Lib {
    /** The words of hello after "hello 3". */
    String hello();

    /** config's words as KEY=VALUE; "ok" once connected. */
    String config(Map<String, String> cfg) throws Exception;

    /** "acquired ...", "busy", or "error ..." (a thrown exception is an error). */
    String acquire() throws Exception;

    /** "released" or "not-owned". */
    String release() throws Exception;

    default String extend(long ms) throws Exception {
        return "unsupported";
    }

    /** Let go of what the session holds (its clients): quit, or the end of its input. */
    void quit();

    /** The session's channel, for notices (lost ...) from the library's threads. */
    default void attach(Session s) {
    }
}
