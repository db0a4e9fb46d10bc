#!/bin/sh
echo "ok farewell"
