// Upstream model names -> the name the price table knows. Vendors and cloud resellers name one
// model many ways: dated snapshots (claude-sonnet-4-5-20250929, gpt-4o-2024-08-06), Bedrock ids
// (us.anthropic.claude-sonnet-4-5-20250929-v1:0, ARNs), Vertex ids (claude-sonnet-4-5@20250929),
// publisher paths (publishers/anthropic/models/...), 1M-context markers (claude-sonnet-4-5[1m]).

/** Bedrock's cross-region inference prefixes (us., eu., apac., global., ...). */
const BEDROCK_REGION_PREFIX = /^(?:us|eu|apac|global|jp|au|ca|us-gov)\./;
const BEDROCK_VENDOR_PREFIX = /^anthropic\./;
/** Bedrock's model version suffix: -v1:0, -v2. */
const BEDROCK_VERSION_SUFFIX = /-v\d+(?::\d+)?$/;
/** Vertex AI's version suffix: @20250929, @default, @latest. */
const VERTEX_VERSION_SUFFIX = /@[\w.-]+$/;
const CONTEXT_MARKER_SUFFIX = /\[\d+[km]\]$/;
/** Dated snapshots: Anthropic's -20250929, OpenAI's -2024-08-06; and the moving -latest. */
const SNAPSHOT_SUFFIX = /-(?:\d{8}|\d{4}-\d{2}-\d{2}|latest)$/;

/** The name as given, lowercased, without a path prefix: what an exact table entry matches. */
export function exactName(upstreamModel: string): string {
  const lower = upstreamModel.trim().toLowerCase();
  return lower.slice(lower.lastIndexOf('/') + 1);
}

/** The name without a path and Bedrock's region and vendor prefixes; version stamps kept. */
export function unprefixedName(upstreamModel: string): string {
  return exactName(upstreamModel).replace(BEDROCK_REGION_PREFIX, '').replace(BEDROCK_VENDOR_PREFIX, '');
}

/** The base model's name: reseller prefixes and suffixes, context markers and snapshot dates removed. */
export function baseModelName(upstreamModel: string): string {
  return unprefixedName(upstreamModel)
    .replace(BEDROCK_VERSION_SUFFIX, '')
    .replace(VERTEX_VERSION_SUFFIX, '')
    .replace(CONTEXT_MARKER_SUFFIX, '')
    .replace(SNAPSHOT_SUFFIX, '');
}
