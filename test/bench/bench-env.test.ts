// The bench scripts' shared knobs: defaults when unset, and a clear refusal of a value that would
// otherwise measure something other than what was asked for.
import t from 'tap';
import { listOf, modeFromEnv, roundsFromEnv, wholeNumbers } from './bench-env.ts';

const defaults = { rounds: 12, durationS: 2 };

t.test('unset knobs take the script\'s defaults and the shared ones', async (t) => {
  t.same(roundsFromEnv({}, defaults), { rounds: 12, warmupS: 6, durationS: 2, connections: 16, gatewayCpu: '0', loadCpu: '1' });
  t.equal(modeFromEnv({}), 'alternate');
});

t.test('set knobs are read', async (t) => {
  const env = { BENCH_ROUNDS: '4', BENCH_WARMUP: '0', BENCH_DURATION: '5', BENCH_CONNECTIONS: '64', BENCH_GATEWAY_CPU: '1', BENCH_LOAD_CPU: '0' };
  t.same(roundsFromEnv(env, defaults), { rounds: 4, warmupS: 0, durationS: 5, connections: 64, gatewayCpu: '1', loadCpu: '0' });
  t.equal(modeFromEnv({ BENCH_MODE: 'paired' }), 'paired');
  t.equal(modeFromEnv({ BENCH_MODE: 'alternate' }), 'alternate');
});

t.test('a misspelt mode is refused with its name, not silently alternated', async (t) => {
  t.throws(() => modeFromEnv({ BENCH_MODE: 'pared' }), /BENCH_MODE must be "alternate" or "paired", not "pared"/);
});

t.test('counts that are not whole numbers, or too small, are refused with their name', async (t) => {
  t.throws(() => roundsFromEnv({ BENCH_ROUNDS: 'ten' }, defaults), /BENCH_ROUNDS must be a whole number of 1 or more, not "ten"/);
  t.throws(() => roundsFromEnv({ BENCH_ROUNDS: '0' }, defaults), /BENCH_ROUNDS/);
  t.throws(() => roundsFromEnv({ BENCH_DURATION: '2.5' }, defaults), /BENCH_DURATION/);
  t.throws(() => roundsFromEnv({ BENCH_CONNECTIONS: '-1' }, defaults), /BENCH_CONNECTIONS/);
  t.throws(() => roundsFromEnv({ BENCH_WARMUP: '-1' }, defaults), /BENCH_WARMUP must be a whole number of 0 or more/);
  t.throws(() => roundsFromEnv({ BENCH_GATEWAY_CPU: '0,1' }, defaults), /BENCH_GATEWAY_CPU must be a CPU number/);
});

t.test('lists: each entry must be a known one, and counts whole numbers', async (t) => {
  const known = ['chat', 'chat-stream'] as const;
  t.same(listOf({}, 'BENCH_CASES', known, known), ['chat', 'chat-stream']);
  t.same(listOf({ BENCH_CASES: ' chat-stream , ' }, 'BENCH_CASES', known, known), ['chat-stream']);
  t.throws(() => listOf({ BENCH_CASES: 'chat,chatt' }, 'BENCH_CASES', known, known), /BENCH_CASES: "chatt" is not one of chat, chat-stream/);
  t.same(wholeNumbers({}, 'BENCH_CONNECTIONS', [1, 16]), [1, 16]);
  t.same(wholeNumbers({ BENCH_CONNECTIONS: '16,64' }, 'BENCH_CONNECTIONS', [1]), [16, 64]);
  t.throws(() => wholeNumbers({ BENCH_CONNECTIONS: '16,sixty' }, 'BENCH_CONNECTIONS', [1]), /BENCH_CONNECTIONS must be a whole number of 1 or more, not "sixty"/);
});
