#!/bin/sh
got=$(sh farewell.sh Ada)
[ "$got" = "Goodbye, Ada!" ] || { echo "FAIL farewell: got '$got', want 'Goodbye, Ada!'"; exit 1; }
echo "ok farewell"
