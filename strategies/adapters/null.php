<?php
/*
 * null.php - the null adapter in PHP (manifest null-php.adapter): no lock, no
 * Redis. It reads its requests and writes its replies as symfony_lock.php
 * does (fgets on STDIN, one fwrite and fflush a line), and answers each at
 * once: every acquire granted, every release released. What a section costs
 * through it is the protocol and a PHP loop, which `lockbench bench` sets
 * against Symfony Lock's section at the same load (the adapter's share).
 * "--check" prints the library and its version and exits 0.
 */

function say(string $line): void
{
    if (@fwrite(STDOUT, $line . "\n") === false)
        exit(0); /* lockbench has closed its end: nobody to answer */
    fflush(STDOUT);
}

function main(array $argv): int
{
    if (in_array('--check', array_slice($argv, 1), true)) {
        echo "library=null version=1 php=" . PHP_VERSION . "\n";
        return 0;
    }
    while (($raw = fgets(STDIN)) !== false) {
        $words = preg_split('/\s+/', trim($raw), -1, PREG_SPLIT_NO_EMPTY);
        if (!$words)
            continue;
        switch ($words[0]) {
            case 'hello':
                say('hello 3 library=null version=1 language=php extend=yes lost=no extends=never claims=-');
                break;
            case 'config':
                say('ok');
                break;
            case 'acquire':
                say('acquired');
                break;
            case 'release':
                say('released');
                break;
            case 'extend':
                say('extended');
                break;
            case 'quit':
                say('bye');
                return 0;
            default:
                say('error unknown request ' . substr(preg_replace('/[^ -~]/', '?', $words[0]), 0, 40));
        }
    }
    return 0;
}

exit(main($argv));
