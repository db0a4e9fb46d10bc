#!/bin/sh
got=$(sh greet.sh Ada)
[ "$got" = "Hello, Ada!" ] || { echo "FAIL greet: got '$got', want 'Hello, Ada!'"; exit 1; }
echo "ok greet"
