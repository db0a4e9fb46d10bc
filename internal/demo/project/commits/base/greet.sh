#!/bin/sh
echo "Hello, ${1:-world}!"
