#!/bin/sh
# A library still retrying when the run stops: its answer to the last
# acquire ("busy") comes after lockbench has given up on it and sent quit.
read -r line; echo "hello 1 library=late version=1 language=sh extend=no lost=no"
read -r line; echo "ok"
n=0
while read -r line; do
	case "$line" in
	acquire)
		n=$((n + 1))
		if [ "$n" -eq 1 ]; then echo "acquired"; else sleep 1.2; echo "busy"; fi ;;
	release) echo "released" ;;
	quit) echo "bye"; exit 0 ;;
	esac
done
