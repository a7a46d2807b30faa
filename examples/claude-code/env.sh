# Claude Code through Relay in proxy mode. Source this file: `. ./env.sh`, after filling in the keys.
export ANTHROPIC_BASE_URL=http://127.0.0.1:8080/vendor-b
export ANTHROPIC_API_KEY="${ANTHROPIC_API_KEY:?set your own Anthropic key}"
export ANTHROPIC_CUSTOM_HEADERS="X-GW-API-Key: ${RELAY_KEY:?set your relay key}
X-GW-Proxy-Mode: 1"
export CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1
export DISABLE_TELEMETRY=1
export DISABLE_ERROR_REPORTING=1
export DISABLE_AUTOUPDATER=1
