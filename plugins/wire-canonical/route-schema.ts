// The documented answers of POST /v1/generate for /openapi.json: the canonical response (JSON),
// the canonical stream events (SSE, one event per frame), and the canonical error body.
import * as canonical from '../../core/plugin-api/canonical.ts';

const error = {
  description: 'An error in the canonical error body (Relay\'s own, or the upstream\'s with its status kept).',
  content: { 'application/json': { schema: canonical.CanonicalErrorBody } },
};

export const generateResponses = {
  200: {
    description: 'The canonical response, or with `stream: true` an SSE stream: each frame is `event: <type>` with one canonical stream event as its JSON data.',
    content: {
      'application/json': { schema: canonical.CanonicalResponse },
      'text/event-stream': { schema: canonical.StreamEvent },
    },
  },
  '4XX': error,
  '5XX': error,
};
