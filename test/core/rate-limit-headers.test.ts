// OpenAI's reset durations read and written as OpenAI writes them (core/pipeline/rate-limit-headers.ts).
import t from 'tap';
import { clientRateLimitHeaders, formatResetDuration, parseResetDuration } from '../../core/pipeline/rate-limit-headers.ts';

t.test('durations', async (t) => {
  t.equal(parseResetDuration('6ms'), 6);
  t.equal(parseResetDuration('1m30.5s'), 90_500);
  t.equal(parseResetDuration('1h2m3s'), 3_723_000);
  t.equal(parseResetDuration('soon'), null);
  t.equal(parseResetDuration(''), null);
  t.equal(formatResetDuration(20), '20ms');
  t.equal(formatResetDuration(90_500), '1m30.5s');
  t.equal(formatResetDuration(3_600_000), '1h0m0s');
  t.equal(formatResetDuration(-5), '0ms', 'a reset in the past is now');
});

t.test('an unreadable reset is left out; other headers still map', async (t) => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  t.same(clientRateLimitHeaders({ 'x-ratelimit-reset-requests': 'later', 'x-ratelimit-limit-requests': '5' }, 'openai.chat', 'anthropic.messages', now),
    { 'anthropic-ratelimit-requests-limit': '5' });
  t.same(clientRateLimitHeaders({ 'x-ratelimit-reset-tokens': '1.2s' }, 'openai.chat', 'anthropic.messages', now),
    { 'anthropic-ratelimit-tokens-reset': '2026-01-01T00:00:02Z' }, 'rounded up to the second');
  t.same(clientRateLimitHeaders({ 'content-type': 'application/json' }, 'openai.chat', 'anthropic.messages', now), {}, 'nothing to carry');
});
