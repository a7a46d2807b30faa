// Every (vendor, upstream shape) pair the conformance corpus runs: OpenAI's and Anthropic's
// and Bedrock's codecs, and each vendor built on them with its own wire's fixtures (Azure OpenAI).
import { createOpenAIAdapter } from '../../plugins/vendor-openai/adapter.ts';
import { createAzureOpenAIAdapter } from '../../plugins/vendor-azure-openai/adapter.ts';
import { UPSTREAM_SHAPES, vendorFor, type UpstreamShape, type VendorCodec } from './harness.ts';
import { ERROR_STREAM_FIXTURES, RESPONSE_FIXTURES, STREAM_FIXTURES } from './fixtures/responses.ts';
import { AZURE_ERROR_STREAM_FIXTURES, AZURE_RESPONSE_FIXTURES, AZURE_STREAM_FIXTURES } from './fixtures/azure.ts';

export interface UpstreamCase {
  /** How assertions name the case: the shape, prefixed by the vendor when it is not the shape's own. */
  label: string;
  shape: UpstreamShape;
  vendor: VendorCodec;
  response: unknown;
  stream: string;
  errorStream: string;
  /** Frames before the first output frame of `stream` (failover is possible until then). */
  openingFrames: number;
}

const OPENING: Record<UpstreamShape, number> = { 'openai.chat': 1, 'openai.responses': 2, 'anthropic.messages': 2, 'bedrock.converse': 1 };

const azure = createAzureOpenAIAdapter('azure-openai', createOpenAIAdapter('openai'));
/** The vendors built on another's codec, for tests that pick their own fixtures. */
export const UPSTREAM_CASE_VENDORS: Record<string, VendorCodec> = { 'azure-openai': azure };
const AZURE_SHAPES = ['openai.chat', 'openai.responses'] as const;

export const UPSTREAM_CASES: UpstreamCase[] = [
  ...UPSTREAM_SHAPES.map((shape) => ({
    label: shape, shape, vendor: vendorFor(shape),
    response: RESPONSE_FIXTURES[shape], stream: STREAM_FIXTURES[shape], errorStream: ERROR_STREAM_FIXTURES[shape], openingFrames: OPENING[shape],
  })),
  ...AZURE_SHAPES.map((shape) => ({
    label: `azure-openai ${shape}`, shape, vendor: azure,
    response: AZURE_RESPONSE_FIXTURES[shape], stream: AZURE_STREAM_FIXTURES[shape], errorStream: AZURE_ERROR_STREAM_FIXTURES[shape],
    // Azure's prompt annotation chunk is one more opening frame.
    openingFrames: OPENING[shape] + (shape === 'openai.chat' ? 1 : 0),
  })),
];
