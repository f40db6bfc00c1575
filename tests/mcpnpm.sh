# mcpnpm.sh: sourced by the MCP tests: installs the reference MCP servers from the npm registry
# into a cache dir (once), and sets NPMDIR. Says SKIPPED and returns 1 when node, npm or the
# registry cannot be had.
NPMDIR=${NIGHTSHIFT_NPM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/nightshift-npm}
MCP_PACKAGES="@modelcontextprotocol/server-filesystem@2026.8.31 @modelcontextprotocol/server-everything@2026.8.31"
mcp_npm() {
	if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
		echo "SKIPPED $1: node and npm are not installed (ci/packages.txt has nodejs npm)"
		return 1
	fi
	if [ ! -f "$NPMDIR/node_modules/@modelcontextprotocol/server-everything/package.json" ] ||
	   [ ! -f "$NPMDIR/node_modules/@modelcontextprotocol/server-filesystem/package.json" ]; then
		mkdir -p "$NPMDIR"
		# shellcheck disable=SC2086
		if ! npm install --no-audit --no-fund --loglevel=error --prefix "$NPMDIR" $MCP_PACKAGES >"$NPMDIR/install.log" 2>&1; then
			echo "SKIPPED $1: npm could not install $MCP_PACKAGES from the registry:"
			tail -5 "$NPMDIR/install.log"
			return 1
		fi
	fi
	return 0
}

# The official MCP conformance suite. 0.1.12 runs on Node 18 and 20 (later ones need Node 22's
# fs.globSync); its scenario servers need the SDK it was made with (1.25.2), later SDKs refuse
# the one server it connects twice.
CONFDIR=${NIGHTSHIFT_NPM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/nightshift-npm}/conformance
CONF_PACKAGES="@modelcontextprotocol/conformance@0.1.12 @modelcontextprotocol/sdk@1.25.2"
mcp_conformance() {
	if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
		echo "SKIPPED $1: node and npm are not installed (ci/packages.txt has nodejs npm)"
		return 1
	fi
	if [ ! -f "$CONFDIR/node_modules/@modelcontextprotocol/conformance/dist/index.js" ]; then
		mkdir -p "$CONFDIR"
		# shellcheck disable=SC2086
		if ! npm install --no-audit --no-fund --loglevel=error --prefix "$CONFDIR" $CONF_PACKAGES >"$CONFDIR/install.log" 2>&1; then
			echo "SKIPPED $1: npm could not install $CONF_PACKAGES from the registry:"
			tail -5 "$CONFDIR/install.log"
			return 1
		fi
	fi
	return 0
}
