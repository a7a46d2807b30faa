// relay-gateway/clients: recognising the known clients (Codex, Claude Code, the official SDKs) by
// their headers, for integrations that attribute requests.
export { codexAttribution, isCodex, CODEX_CLIENT, ATTRIBUTION_HEADERS as CODEX_ATTRIBUTION_HEADERS } from '../attribution/codex.ts';
export { claudeCodeAttribution, isClaudeCode, CLAUDE_CODE_CLIENT, CLAUDE_CODE_SESSION_HEADER } from '../attribution/claude-code.ts';
export { knownClientAttribution } from '../attribution/known-clients.ts';
