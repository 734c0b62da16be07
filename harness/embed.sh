#!/bin/sh
# embed.sh NAME FILE - FILE as a C string constant NAME, on stdout:
# backslashes, quotes and question marks (no trigraphs) escaped, one
# literal per line. For report.js, compiled into report_html.c.
set -eu
printf '/* generated from %s by harness/embed.sh: edit that file */\n' "$2"
printf 'static const char %s[] =\n' "$1"
sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/?/\\?/g' -e 's/^/\t"/' -e 's/$/\\n"/' "$2"
printf '\t"";\n'
