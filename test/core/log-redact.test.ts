// LOG_REDACT_PATHS (core/server/redact.ts) on what reaches the log: credentials in headers, and
// the parameters that a failed PGlite query carries on its error (sealed values, hashes).
import t from 'tap';
import { Writable } from 'node:stream';
import pino from 'pino';
import { PGlite } from '@electric-sql/pglite';
import { LOG_REDACT_PATHS } from '../../core/server/redact.ts';

function capture() {
  const lines: string[] = [];
  const stream = new Writable({ write(chunk, _enc, done) { lines.push(String(chunk)); done(); } });
  return { log: pino({ redact: { paths: LOG_REDACT_PATHS, censor: '[redacted]' } }, stream), lines };
}

t.test("a failed PGlite query's parameters are not logged, its message and query are", async (t) => {
  const db = new PGlite();
  t.teardown(() => db.close());
  await db.query('CREATE TABLE k (id int PRIMARY KEY, sealed text NOT NULL)');
  await db.query('INSERT INTO k VALUES (1, $1)', ['v1.first.sealed-value']);
  const err = await db.query('INSERT INTO k VALUES (1, $1)', ['v1.second.sealed-value']).catch((e: unknown) => e);
  t.ok(err instanceof Error);
  t.same((err as { params?: unknown }).params, ['v1.second.sealed-value'], 'PGlite does attach the parameters');
  const { log, lines } = capture();
  log.error({ err }, 'request failed');
  log.error({ err: new Error('wrapped', { cause: err }) }, 'wrapped');
  const text = lines.join('');
  t.notOk(text.includes('sealed-value'), 'no parameter in the log');
  t.match(text, /duplicate key/);
  t.match(text, /INSERT INTO k/);
});

t.test('credential headers are not logged', async (t) => {
  const { log, lines } = capture();
  log.info({ req: { headers: { authorization: 'Bearer rk_secret', 'x-api-key': 'sk-secret', cookie: 'relay_session=s' } } }, 'r');
  t.notOk(/rk_secret|sk-secret|relay_session=s/.test(lines.join('')));
});
