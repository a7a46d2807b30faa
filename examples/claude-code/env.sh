# Claude Code through Relay in proxy mode. Source this file: `. ./env.sh`, with ANTHROPIC_API_KEY
# (your own Anthropic key), RELAY_KEY and RELAY_MODEL set (test/e2e/claude-code.test.ts sources it).
export ANTHROPIC_BASE_URL="${RELAY_URL:-http://127.0.0.1:8080}/vendor-b"   # RELAY_URL: Relay's inference port
export ANTHROPIC_API_KEY="${ANTHROPIC_API_KEY:?set your own Anthropic key}"
export ANTHROPIC_CUSTOM_HEADERS="X-GW-API-Key: ${RELAY_KEY:?set your relay key}
X-GW-Proxy-Mode: 1"
# Claude Code asks for its own default model names unless told otherwise: use Relay slugs your
# relay key's policy grants, for the main model and for the small fast one it uses for side tasks.
export ANTHROPIC_MODEL="${RELAY_MODEL:?set RELAY_MODEL to a model slug your relay key is granted}"
export ANTHROPIC_DEFAULT_HAIKU_MODEL="${RELAY_SMALL_MODEL:-$RELAY_MODEL}"
export CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1
export DISABLE_TELEMETRY=1
export DISABLE_ERROR_REPORTING=1
export DISABLE_AUTOUPDATER=1
