// Repeated failed sign-ins are slowed down per username and per client address, and the
// count lives in Postgres, so a second instance refuses the same guesser.
import t from 'tap';
import { addAdminUser, client, createTestDatabase, startControl } from '../support/control-plane.ts';

const database = await createTestDatabase();
const throttle = { userFreeFailures: 3, addressFreeFailures: 8, baseLockMs: 1_500 };
const relay = await startControl({ databaseUrl: database.url, control: { loginThrottle: throttle } });
const other = await startControl({ databaseUrl: database.url, control: { loginThrottle: throttle } });
t.teardown(async () => {
  await relay.close();
  await other.close();
  await database.drop();
});
await addAdminUser(relay, 'ada', 'correct horse battery');
await addAdminUser(relay, 'bob', 'bobs own password');

const login = (base: string, username: string, password: string) => client(base)('POST', '/api/auth/login', { username, password });

t.test('per username: locked after the free failures, on every instance, then free again', async (t) => {
  for (let i = 0; i < 3; i++) t.equal((await login(relay.url, 'ada', `guess ${i}`)).status, 401, `failure ${i + 1} is a plain 401`);
  t.equal((await login(relay.url, 'ada', 'guess 3')).status, 401, 'the failure past the free ones still answers 401, and locks');
  const locked = await login(relay.url, 'ada', 'correct horse battery');
  t.equal(locked.status, 429, 'even the right password is refused while locked');
  t.equal(locked.json.error.code, 'RELAY_ERR_LOGIN_THROTTLED');
  const retryAfter = Number(locked.headers.get('retry-after'));
  t.ok(retryAfter >= 1 && retryAfter <= 2, `retry-after ${retryAfter}`);
  t.match(locked.json.error.message, /try again in \d+s/);
  t.equal((await login(other.url, 'ada', 'correct horse battery')).status, 429, 'the other instance refuses too');
  t.equal((await login(relay.url, 'bob', 'bobs own password')).status, 200, 'another user is not locked');

  await new Promise((r) => setTimeout(r, retryAfter * 1000 + 100));
  t.equal((await login(other.url, 'ada', 'correct horse battery')).status, 200, 'after the wait the right password works');
  t.equal((await login(relay.url, 'ada', 'wrong again')).status, 401, 'a success cleared the count');
});

t.test('locks grow with each further failure', async (t) => {
  for (let i = 0; i < 4; i++) await login(relay.url, 'bob', `nope ${i}`);
  const first = Number((await login(relay.url, 'bob', 'x')).headers.get('retry-after'));
  await new Promise((r) => setTimeout(r, first * 1000 + 100));
  t.equal((await login(relay.url, 'bob', 'still wrong')).status, 401);
  const second = Number((await login(relay.url, 'bob', 'x')).headers.get('retry-after'));
  t.ok(second > first, `lock grew from ${first}s to ${second}s`);
});

t.test('per client address: many usernames from one address are throttled', async (t) => {
  await relay.db.query('DELETE FROM admin_login_failures');
  const statuses: number[] = [];
  for (let i = 0; i < 10; i++) statuses.push((await login(relay.url, `nobody-${i}`, 'whatever pw')).status);
  t.same(statuses.slice(0, 9), Array(9).fill(401), 'failures up to the free count and the locking one are 401');
  t.equal(statuses[9], 429, 'then the address is locked');
  const rows = await relay.db.query<{ throttle_key: string }>("SELECT throttle_key FROM admin_login_failures WHERE throttle_key LIKE 'ip:%'");
  t.equal(rows.rows.length, 1);
});

t.test('parallel guesses: the check and the count are one step, across instances', async (t) => {
  await relay.db.query('DELETE FROM admin_login_failures');
  await addAdminUser(relay, 'cara', 'caras real password');
  // 60 wrong passwords at once, half to each instance: only the free failures and the one that
  // locks may reach the password check (401); every other is refused before it (429).
  const statuses = await Promise.all(Array.from({ length: 60 }, (_, i) => login(i % 2 ? relay.url : other.url, 'cara', `parallel guess ${i}`).then((r) => r.status)));
  const checked = statuses.filter((s) => s === 401).length;
  // One more may pass where the first lock ran out while the burst still queued on a loaded machine.
  t.ok(checked >= throttle.userFreeFailures + 1 && checked <= throttle.userFreeFailures + 2, `${checked} of 60 reached the password check`);
  t.equal(statuses.filter((s) => s === 429).length, 60 - checked, 'the rest were throttled');
  const rows = await relay.db.query<{ failures: number }>("SELECT failures FROM admin_login_failures WHERE throttle_key = 'user:cara'");
  t.equal(Number(rows.rows[0]?.failures), checked, 'refused attempts are not counted');
});

t.test('a right password admitted in the same burst clears the count it took', async (t) => {
  await relay.db.query('DELETE FROM admin_login_failures');
  const [good] = await Promise.all([login(relay.url, 'bob', 'bobs own password'), login(other.url, 'nobody-x', 'whatever pw')]);
  t.equal(good.status, 200);
  const rows = await relay.db.query<{ throttle_key: string; failures: number }>('SELECT throttle_key, failures FROM admin_login_failures ORDER BY throttle_key');
  t.same(rows.rows.map((r) => [r.throttle_key, Number(r.failures)]), [['ip:127.0.0.1', 1], ['user:nobody-x', 1]], 'only the failure is counted');
});

t.test('the current password a signed-in user gives to change it is throttled with sign-in', async (t) => {
  await relay.db.query('DELETE FROM admin_login_failures');
  await addAdminUser(relay, 'dora', 'doras real password');
  const signedIn = await login(relay.url, 'dora', 'doras real password');
  t.equal(signedIn.status, 200);
  const cookie = signedIn.headers.get('set-cookie')!.split(';')[0]!;
  const change = (base: string, currentPassword: string) =>
    client(base, { cookie, csrf: true })('PUT', '/api/auth/password', { currentPassword, newPassword: 'doras new password' });
  // A held session (a borrowed laptop, a stolen cookie) guessing the password it needs to take the account.
  for (let i = 0; i < 4; i++) t.equal((await change(relay.url, `guess ${i}`)).status, 403, `wrong guess ${i + 1}: 403`);
  const locked = await change(other.url, 'doras real password');
  t.equal(locked.status, 429, 'then even the right current password is refused, on every instance');
  t.equal(locked.json.error.code, 'RELAY_ERR_LOGIN_THROTTLED');
  t.ok(Number(locked.headers.get('retry-after')) >= 1, 'with retry-after');
  t.equal((await login(relay.url, 'dora', 'doras real password')).status, 429, 'and sign-in counts the same failures');
  await new Promise((r) => setTimeout(r, Number(locked.headers.get('retry-after')) * 1000 + 100));
  t.equal((await change(relay.url, 'doras real password')).status, 204, 'after the wait the right current password changes it');
  t.equal((await login(relay.url, 'dora', 'wrong once more')).status, 401, 'a success cleared the count');
});
