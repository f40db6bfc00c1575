#!/usr/bin/env bash
# Broken manifests: exit 2 and the exact file:line:col of each mistake.
exec python3 "$(dirname "$0")/badmanifest.py"
