#!/bin/sh
got=$(sh greet.sh --shout Ada)
[ "$got" = "HELLO, ADA!" ] || { echo "FAIL shout: got '$got', want 'HELLO, ADA!'"; exit 1; }
echo "ok shout"
