#!/bin/sh
# A lock on the run's own Redis (SET key token NX PX ttl, through redis-cli)
# whose lost notice is 3 s late: a watcher polls the key every 50 ms while
# the lock is held, and once the key no longer holds this client's token (the
# server expired it) it waits 3 s before it says "lost". lockbench times the
# notice against the server's expiry (keyevents.csv): the lag reads 3 s.
read -r line; echo "hello 3 library=lost-3s-late version=1 language=sh extend=no lost=yes extends=never claims=-"
read -r line
url=; key=; ttl=
for w in $line; do
  case $w in
    nodes=*) url=${w#nodes=}; url=${url%%,*} ;;
    key=*) key=${w#key=} ;;
    ttl_ms=*) ttl=${w#ttl_ms=} ;;
  esac
done
echo "ok"
n=0; watcher=
stop_watcher() {
  if [ -n "$watcher" ]; then
    pkill -P "$watcher" 2>/dev/null; kill "$watcher" 2>/dev/null; wait "$watcher" 2>/dev/null
    watcher=
  fi
}
while read -r line; do
  case $line in
    acquire)
      n=$((n + 1)); token="late-$$-$n"
      if [ "$(redis-cli -u "$url" SET "$key" "$token" NX PX "$ttl")" = OK ]; then
        echo "acquired token=$token"
        ( while [ "$(redis-cli -u "$url" GET "$key")" = "$token" ]; do sleep 0.05; done
          sleep 3; echo "lost the key was gone 3 s ago" ) &
        watcher=$!
      else
        echo busy
      fi ;;
    release)
      stop_watcher
      said=$(redis-cli -u "$url" EVAL "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end" 1 "$key" "$token")
      if [ "$said" = 1 ]; then echo released; else echo not-owned; fi ;;
    quit) stop_watcher; echo bye; exit 0 ;;
    *) echo "error unknown request" ;;
  esac
done
stop_watcher
