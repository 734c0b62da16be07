<?php
/*
 * symfony_lock.php - lockbench's adapter for Symfony Lock (symfony/lock 5.4,
 * Debian's php-symfony-lock), with php-redis's Redis class as its client.
 *
 * Speaks lockbench's adapter protocol, version 3 (docs/adapters.md), on stdin
 * and stdout, one line each way. Uses only Symfony Lock's public API, the way
 * its documentation shows: new RedisStore($redis), new CombinedStore($stores,
 * new ConsensusStrategy()), new LockFactory($store), createLockFromKey(new
 * Key($resource), $ttl), Lock::acquire($blocking), refresh($ttl), release(),
 * and its exceptions; Key::getState() gives the value RedisStore wrote (its
 * token, reported as token=). Symfony Lock has no lost-lock callback and
 * never extends by itself: lost=no, extends=never.
 *
 * Arguments: the mode, "redis" (a RedisStore on the first node lockbench
 * names) or "combined" (a CombinedStore over every node, ConsensusStrategy:
 * Symfony's Redlock); "defaults" keeps LockFactory::createLock's default TTL
 * (300 s) instead of lockbench's --ttl; "--check" prints the library and its
 * version and exits 0 when the classes load.
 *
 * Symfony Lock 5.4 has no Sentinel client of its own: RedisStore takes a
 * connected client (symfony/cache's DSN path, not installed here, is the one
 * that asks Sentinels). A config with sentinels= is answered with an error.
 */

const PROTOCOL = 3;
const AUTOLOAD = '/usr/share/php/Symfony/Component/Lock/autoload.php';
const PACKAGE = 'php-symfony-lock';

use Symfony\Component\Lock\Exception\LockConflictedException;
use Symfony\Component\Lock\Key;
use Symfony\Component\Lock\LockFactory;
use Symfony\Component\Lock\Store\CombinedStore;
use Symfony\Component\Lock\Store\RedisStore;
use Symfony\Component\Lock\Strategy\ConsensusStrategy;

/* The installed version of Symfony Lock: Debian's package version without its
 * Debian part (5.4.53+dfsg-0+deb12u1 is 5.4.53); the component itself carries
 * no version constant. */
function library_version(): ?string
{
    $out = @shell_exec('dpkg-query -W -f=\'${Version}\' ' . PACKAGE . ' 2>/dev/null');
    if (!is_string($out) || !preg_match('/^(?:\d+:)?(\d+(?:\.\d+)+)/', $out, $m))
        return null;
    return $m[1];
}

function check(): int
{
    if (!is_readable(AUTOLOAD)) {
        echo "cannot load Symfony Lock: no " . AUTOLOAD . " (Debian package " . PACKAGE . ")\n";
        return 1;
    }
    require_once AUTOLOAD;
    foreach ([LockFactory::class, RedisStore::class, CombinedStore::class, ConsensusStrategy::class] as $c) {
        if (!class_exists($c)) {
            echo "cannot load Symfony Lock's class $c\n";
            return 1;
        }
    }
    if (!class_exists('Redis')) {
        echo "cannot load php-redis's Redis class (Debian package php-redis)\n";
        return 1;
    }
    $v = library_version();
    if ($v === null) {
        echo "cannot read the version of " . PACKAGE . " (dpkg-query)\n";
        return 1;
    }
    echo "library=symfony-lock version=$v php=" . PHP_VERSION . " php-redis=" . phpversion('redis') . "\n";
    return 0;
}

/* The session's streams: stdin and stdout, or a host's connection. */
$lb_in = STDIN;
$lb_out = STDOUT;

function say(string $line): void
{
    global $lb_out;
    if (@fwrite($lb_out, $line . "\n") === false)
        exit(0); /* lockbench has closed its end: nobody to answer */
    fflush($lb_out);
}

/* An adapter host (the environment's LOCKBENCH_ADAPTER_HOST names its Unix
 * socket; docs/adapters.md): each connection is a session served by a child
 * forked for it (pcntl_fork), with its own Redis connections and locks, as a
 * process of its own would have; the classes are loaded once, before. Returns
 * in the child, with the session's streams set; the host itself never returns. */
function host(string $path): void
{
    global $lb_in, $lb_out;
    $ctx = stream_context_create(['socket' => ['backlog' => 4096]]);
    $server = @stream_socket_server("unix://$path", $errno, $errstr,
                                    STREAM_SERVER_BIND | STREAM_SERVER_LISTEN, $ctx);
    if ($server === false) {
        fwrite(STDERR, "adapter host: cannot listen on $path: $errstr\n");
        exit(1);
    }
    /* sessions that ended are reaped here: their CPU time is then the host's
     * (lockbench counts it as the adapters') */
    pcntl_async_signals(true);
    pcntl_signal(SIGCHLD, function () {
        while (pcntl_waitpid(-1, $status, WNOHANG) > 0)
            ;
    });
    for (;;) {
        $conn = @stream_socket_accept($server, -1);
        if ($conn === false)
            continue;
        $pid = pcntl_fork();
        if ($pid === 0) {
            fclose($server);
            pcntl_signal(SIGCHLD, SIG_DFL);
            $lb_in = $lb_out = $conn;
            return;
        }
        if ($pid < 0)
            fwrite(STDERR, "adapter host: cannot fork a session\n");
        fclose($conn);
    }
}

/* An exception as one line of text: its class and message, and its causes'
 * (Symfony wraps the client's RedisException in its own). */
function error_text(Throwable $e): string
{
    $parts = [];
    for ($x = $e; $x !== null && count($parts) < 4; $x = $x->getPrevious()) {
        $name = get_class($x);
        $name = substr($name, strrpos("\\" . $name, "\\"));
        $parts[] = $name . ': ' . $x->getMessage();
    }
    $text = preg_replace('/\s+/', ' ', implode(' <- ', $parts));
    return substr(preg_replace('/[\x00-\x1f\x7f]/', '?', $text), 0, 400);
}

/* config's TLS words (docs/adapters.md, only with rediss:// nodes:
 * tls_ca=PATH tls_cert=PATH tls_key=PATH tls_insecure=1, each path absolute
 * and %XX-encoded) as php-redis's stream context options (PHP's SSL context:
 * cafile, local_cert, local_pk, verify_peer, verify_peer_name). */
function tls_context(array $cfg): array
{
    $insecure = ($cfg['tls_insecure'] ?? '') === '1';
    $ssl = ['verify_peer' => !$insecure, 'verify_peer_name' => !$insecure];
    foreach (['tls_ca' => 'cafile', 'tls_cert' => 'local_cert', 'tls_key' => 'local_pk'] as $w => $opt)
        if (isset($cfg[$w]))
            $ssl[$opt] = rawurldecode($cfg[$w]);
    return $ssl;
}

/* A php-redis client for redis[s]://[[USER]:PASSWORD@]HOST[:PORT][/DB], with
 * lockbench's network timeout for connecting and reading; AUTH and SELECT as
 * the URL says, as redis-py's from_url does. rediss://: php-redis's own TLS,
 * a tls:// host and a stream context ($ssl: tls_context) as connect()'s last
 * argument. */
function connect_url(string $url, float $timeout, array $ssl): Redis
{
    $u = parse_url($url);
    $scheme = $u === false ? '' : ($u['scheme'] ?? '');
    if (($scheme !== 'redis' && $scheme !== 'rediss') || !isset($u['host']))
        throw new InvalidArgumentException("not a redis:// URL: $url");
    $r = new Redis();
    if ($scheme === 'rediss') {
        /* a failed handshake is a false and PHP warnings (OpenSSL's reason),
         * not an exception: said as one, in their words */
        $said = [];
        set_error_handler(function (int $no, string $text) use (&$said) {
            $said[] = $text;
            return true;
        });
        try {
            $ok = $r->connect('tls://' . $u['host'], (int)($u['port'] ?? 6379), $timeout, null, 0,
                              $timeout, ['stream' => $ssl]);
        } finally {
            restore_error_handler();
        }
        if (!$ok)
            throw new RedisException('TLS connect to ' . $u['host'] . ': '
                                     . (implode(' ', $said) ?: 'failed'));
    } else
        $r->connect($u['host'], (int)($u['port'] ?? 6379), $timeout, null, 0, $timeout);
    $user = isset($u['user']) ? rawurldecode($u['user']) : '';
    $pass = isset($u['pass']) ? rawurldecode($u['pass']) : '';
    if ($pass !== '' && $user !== '')
        $r->auth([$user, $pass]);
    elseif ($pass !== '')
        $r->auth($pass);
    $db = (int)trim($u['path'] ?? '', '/');
    if ($db !== 0)
        $r->select($db);
    return $r;
}

function main(array $argv): int
{
    $args = array_slice($argv, 1);
    if (in_array('--check', $args, true)) /* after the mode: "redis --check" */
        return check();
    require_once AUTOLOAD;
    $mode = in_array('combined', $args, true) ? 'combined' : 'redis';
    $defaults = in_array('defaults', $args, true);
    $version = library_version() ?? 'unknown';
    $claims = $mode === 'combined' ? 'MDFO' : 'MDO';
    global $lb_in;
    if (getenv('LOCKBENCH_ADAPTER_HOST'))
        host(getenv('LOCKBENCH_ADAPTER_HOST'));

    $factory = null;
    $resource = null;
    $ttl = null;      /* seconds, or null: createLock's default */
    $blocking = false;
    $lock = null;     /* the lock of the last acquire */

    while (($raw = fgets($lb_in)) !== false) {
        $words = preg_split('/\s+/', trim($raw), -1, PREG_SPLIT_NO_EMPTY);
        if (!$words)
            continue;
        $cmd = $words[0];
        try {
            switch ($cmd) {
            case 'hello':
                say(sprintf('hello %d library=symfony-lock version=%s language=php extend=yes lost=no '
                            . 'extends=never claims=%s', PROTOCOL, $version, $claims));
                break;
            case 'config':
                $cfg = [];
                foreach (array_slice($words, 1) as $w) {
                    $kv = explode('=', $w, 2);
                    $cfg[$kv[0]] = $kv[1] ?? '';
                }
                if (isset($cfg['sentinels'])) {
                    say('error Symfony Lock 5.4 has no Sentinel client of its own: RedisStore takes a '
                        . 'connected client (symfony/cache\'s redis_sentinel DSN is not installed)');
                    break;
                }
                $timeout = (int)$cfg['timeout_ms'] / 1000.0;
                $urls = explode(',', $cfg['nodes']);
                if ($mode === 'combined') {
                    $stores = [];
                    foreach ($urls as $url)
                        $stores[] = new RedisStore(connect_url($url, $timeout, tls_context($cfg)));
                    $store = new CombinedStore($stores, new ConsensusStrategy());
                } else {
                    $store = new RedisStore(connect_url($urls[0], $timeout, tls_context($cfg)));
                }
                $factory = new LockFactory($store);
                $resource = $cfg['key'];
                $ttl = $defaults ? null : (int)$cfg['ttl_ms'] / 1000.0;
                $blocking = ($cfg['wait'] ?? 'one') === 'library';
                say('ok');
                break;
            case 'acquire':
                /* a lock per acquire, as the documentation's examples make one
                 * per job; the Key is kept to read the token RedisStore wrote */
                $key = new Key($resource);
                $lock = $ttl === null ? $factory->createLockFromKey($key)
                                      : $factory->createLockFromKey($key, $ttl);
                try {
                    $held = $lock->acquire($blocking);
                } catch (LockConflictedException $e) {
                    /* acquire(true) gives up only on an error; a conflict it
                     * throws comes from the refresh that follows the grant */
                    fwrite(STDERR, sprintf("%.6f acquire: %s\n", microtime(true), error_text($e)));
                    say('error ' . error_text($e));
                    break;
                }
                if ($held) {
                    $token = $key->hasState(RedisStore::class) ? $key->getState(RedisStore::class) : null;
                    say($token !== null ? "acquired token=$token" : 'acquired');
                } else {
                    say('busy');
                }
                break;
            case 'release':
                /* release() deletes its own member only, and raises when the
                 * key still holds it; a lock already gone is not an error to
                 * Symfony, so this never answers not-owned */
                $lock->release();
                say('released');
                break;
            case 'extend':
                $lock->refresh((int)$words[1] / 1000.0);
                say('extended');
                break;
            case 'quit':
                say('bye');
                return 0;
            default:
                say("error unknown request $cmd");
            }
        } catch (LockConflictedException $e) {
            /* refresh(): another holds it, or it is gone */
            say('not-owned');
        } catch (Throwable $e) {
            /* its stderr is the run's adapter-<client>.log */
            fwrite(STDERR, sprintf("%.6f %s: %s\n", microtime(true), $cmd, error_text($e)));
            say('error ' . error_text($e));
        }
    }
    return 0;
}

exit(main($argv));
