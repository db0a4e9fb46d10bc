#!/bin/sh
echo "Goodby, ${1:-world}!"
