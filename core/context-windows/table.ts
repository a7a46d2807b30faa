// The context windows Relay knows without being told (issue 42 item 3): the most prompt tokens each
// model takes, as its vendor's own model pages state it, with the page beside each family. A model
// not listed here is not window-limited unless its spec.contextWindow says so; never add a number
// that no vendor page states.

export interface KnownWindow {
  /** The model's name at its vendor, without a date or version stamp (lookup.ts matches those). */
  model: string;
  /** Prompt tokens the model takes (the page's context window, or its input limit where it gives one). */
  tokens: number;
  /** The vendor's page the number was read from. */
  source: string;
}

/** The date the pages were read, YYYY-MM-DD. */
export const WINDOWS_READ_ON = '2026-11-26';

// Anthropic's model cards (the "Context window" line of each; 1M-context betas are not counted).
const CLAUDE_OVERVIEW = 'https://platform.claude.com/docs/claude/docs/models-overview';
const CLAUDE_OPUS_4_5 = 'https://platform.claude.com/docs/pt-BR/models/opus-4-5/overview';
const CLAUDE_SONNET_4_5 = 'https://platform.claude.com/docs/ja/models/sonnet-4-5/overview';
const CLAUDE_SONNET_5 = 'https://platform.claude.com/docs/zh-CN/models/sonnet-5/overview';
const CLAUDE_OPUS_5 = 'https://platform.claude.com/docs/zh-CN/models/opus-5/overview';

// OpenAI's models as Microsoft's Azure OpenAI documentation states them (Relay's azure-openai
// adapter's vendor; the "Context Window" or "Max Request: Input" column). Published from
// MicrosoftDocs/azure-ai-docs articles/ai-foundry/openai/concepts/models.md (2025-06-25).
const AZURE_OPENAI_MODELS = 'https://learn.microsoft.com/azure/ai-foundry/openai/concepts/models';

// Google's model pages ("Input token limit" / "Maximum input tokens").
const GEMINI_2_0_FLASH = 'https://ai.google.dev/gemini-api/docs/models/gemini-2.0-flash';
const GEMINI_2_0_FLASH_LITE = 'https://ai.google.dev/gemini-api/docs/models/gemini-2.0-flash-lite';
const GEMINI_2_5_PRO = 'https://docs.cloud.google.com/gemini-enterprise-agent-platform/models/gemini/2-5-pro';
const GEMINI_2_5_FLASH_LITE = 'https://cloud.google.com/vertex-ai/generative-ai/docs/models/gemini/2-5-flash-lite';

export const KNOWN_WINDOWS: readonly KnownWindow[] = [
  { model: 'claude-haiku-4-5', tokens: 200_000, source: CLAUDE_OVERVIEW },
  { model: 'claude-sonnet-4-6', tokens: 1_000_000, source: CLAUDE_OVERVIEW },
  { model: 'claude-opus-4-7', tokens: 1_000_000, source: CLAUDE_OVERVIEW },
  { model: 'claude-opus-4-5', tokens: 200_000, source: CLAUDE_OPUS_4_5 },
  { model: 'claude-sonnet-4-5', tokens: 200_000, source: CLAUDE_SONNET_4_5 },
  { model: 'claude-sonnet-5', tokens: 1_000_000, source: CLAUDE_SONNET_5 },
  { model: 'claude-opus-5', tokens: 1_000_000, source: CLAUDE_OPUS_5 },

  { model: 'gpt-4.1', tokens: 1_047_576, source: AZURE_OPENAI_MODELS },
  { model: 'gpt-4.1-mini', tokens: 1_047_576, source: AZURE_OPENAI_MODELS },
  { model: 'gpt-4.1-nano', tokens: 1_047_576, source: AZURE_OPENAI_MODELS },
  { model: 'gpt-4o', tokens: 128_000, source: AZURE_OPENAI_MODELS },
  { model: 'gpt-4o-mini', tokens: 128_000, source: AZURE_OPENAI_MODELS },
  { model: 'o1', tokens: 200_000, source: AZURE_OPENAI_MODELS },
  { model: 'o1-preview', tokens: 128_000, source: AZURE_OPENAI_MODELS },
  { model: 'o1-mini', tokens: 128_000, source: AZURE_OPENAI_MODELS },
  { model: 'o3', tokens: 200_000, source: AZURE_OPENAI_MODELS },
  { model: 'o3-mini', tokens: 200_000, source: AZURE_OPENAI_MODELS },
  { model: 'o3-pro', tokens: 200_000, source: AZURE_OPENAI_MODELS },
  { model: 'o4-mini', tokens: 200_000, source: AZURE_OPENAI_MODELS },
  { model: 'codex-mini', tokens: 200_000, source: AZURE_OPENAI_MODELS },

  { model: 'gemini-2.0-flash', tokens: 1_048_576, source: GEMINI_2_0_FLASH },
  { model: 'gemini-2.0-flash-lite', tokens: 1_048_576, source: GEMINI_2_0_FLASH_LITE },
  { model: 'gemini-2.5-pro', tokens: 1_048_576, source: GEMINI_2_5_PRO },
  { model: 'gemini-2.5-flash-lite', tokens: 1_048_576, source: GEMINI_2_5_FLASH_LITE },
];
