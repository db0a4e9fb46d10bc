#!/bin/sh
if [ "$1" = --shout ]; then
  shift
  echo "HELLO, ${1:-world}!" | tr '[:lower:]' '[:upper:]'
  exit
fi
echo "Hello, ${1:-world}!"
