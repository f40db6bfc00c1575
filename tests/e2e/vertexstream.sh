#!/usr/bin/env bash
# vertexstream: streamed answers of vertex (vertex), as tests/e2e/cloudstream.inc says.
MODES="vertex"
source "$(dirname "$0")/cloudstream.inc"
