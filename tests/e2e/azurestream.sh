#!/usr/bin/env bash
# azurestream: streamed answers of azure (azure-chat azure-responses), as tests/e2e/cloudstream.inc says.
MODES="azure-chat azure-responses"
source "$(dirname "$0")/cloudstream.inc"
