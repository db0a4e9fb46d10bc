#!/bin/sh
if [ "$1" = --shout ]; then
  shift
  echo "HELLO, ${1:-world}!" | tr '[:lower:]' '[:upper:]'
  exit
fi
if [ "$1" = --fr ]; then
  shift
  echo "Bonjour, ${1:-le monde} !"
  exit
fi
echo "Hello, ${1:-world}!"
