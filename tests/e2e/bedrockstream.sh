#!/usr/bin/env bash
# bedrockstream: streamed answers of bedrock (bedrock bedrock-converse), as tests/e2e/cloudstream.inc says.
MODES="bedrock bedrock-converse"
source "$(dirname "$0")/cloudstream.inc"
