// `relay admin-user set`: adds a dashboard user or resets one's password (and role). The
// password comes on standard input, never argv (process lists, shell history). A Relay running
// on the embedded database holds it in its own process and would not see a write from here, so
// then the change goes through that instance's admin API (RELAY_ADMIN_TOKEN) or is refused; the
// Relay is the one holding the data directory's lock, found there, not by the config's port.
import { loadConfigFile } from '../config/load.ts';
import { openDatabase } from '../db/open.ts';
import { migrate } from '../db/migrate.ts';
import { StartupError } from '../errors.ts';
import { ADMIN_ROLES, checkCredentialsShape, upsertAdminUser, type AdminRole } from '../control/admin-users.ts';
import { recordCliChange } from '../control/audit-store.ts';
import { embeddedHolderUrl } from './embedded-holder-url.ts';

export interface AdminUserOptions {
  configFile: string;
  username?: string;
  password?: string;
  role?: string;
  /** --url: the control API of a running Relay to make the change through. */
  url?: string;
}

const USAGE = 'usage: printf %s "$PASSWORD" | relay admin-user set --username <u> [--role admin|viewer] [--url http://host:8081]';

async function readPassword(): Promise<string> {
  if (process.stdin.isTTY) process.stderr.write('password (then Enter and Ctrl-D): ');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  const password = Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
  if (password === '') throw new StartupError(`relay admin-user set: no password on standard input\n${USAGE}`);
  return password;
}

async function setThroughApi(url: string, token: string, username: string, password: string, role: AdminRole | undefined): Promise<void> {
  const call = async (method: string, path: string, body?: unknown) => {
    let res: Response;
    try {
      res = await fetch(`${url}${path}`, {
        method, signal: AbortSignal.timeout(30_000),
        headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (err) {
      throw new StartupError(`relay admin-user set: cannot reach ${url} (${(err as Error).message})`);
    }
    const json = await res.json().catch(() => null) as { error?: { message?: string } } | null;
    if (!res.ok) throw new StartupError(`relay admin-user set: ${url} answered ${res.status}: ${json?.error?.message ?? 'no message'}`);
    return json;
  };
  const list = await call('GET', '/api/users') as { items: Array<{ username: string }> };
  if (list.items.some((u) => u.username === username)) {
    await call('PATCH', `/api/users/${encodeURIComponent(username)}`, { password, ...(role ? { role } : {}) });
  } else {
    await call('POST', '/api/users', { username, password, role: role ?? 'admin' });
  }
}

export async function adminUserSet(options: AdminUserOptions, env: Record<string, string | undefined> = process.env): Promise<number> {
  if (options.password !== undefined) {
    throw new StartupError(`relay admin-user set: --password is refused (argv shows in process lists and shell history); pass the password on standard input\n${USAGE}`);
  }
  if (!options.username) throw new StartupError(USAGE);
  if (options.role !== undefined && !(ADMIN_ROLES as readonly string[]).includes(options.role)) {
    throw new StartupError(`relay admin-user set: --role must be admin or viewer, not ${JSON.stringify(options.role)}`);
  }
  const role = options.role as AdminRole | undefined;
  const username = options.username;
  const password = await readPassword();
  // A short password or a bad name is refused before the database is opened (or migrated).
  checkCredentialsShape(username, password);
  const token = env.RELAY_ADMIN_TOKEN || undefined;
  if (options.url) {
    if (!token) throw new StartupError('relay admin-user set --url needs RELAY_ADMIN_TOKEN (the running Relay\'s admin token)');
    await setThroughApi(options.url.replace(/\/+$/, ''), token, username, password, role);
    process.stdout.write(`user ${username} saved through ${options.url}\n`);
    return 0;
  }
  const { config } = loadConfigFile(options.configFile, env);
  if (!config.database.url) {
    const running = await embeddedHolderUrl(config.dataDir, 'relay admin-user set');
    if (running !== null) {
      if (!token) {
        throw new StartupError(`relay admin-user set: a Relay is running on the embedded database (it holds ${config.dataDir}; its control API is ${running}) and would not see a change written here until it restarts; `
          + 'set RELAY_ADMIN_TOKEN to make the change through it, stop it first, or use the dashboard\'s Users page');
      }
      await setThroughApi(running, token, username, password, role);
      process.stdout.write(`user ${username} saved through the running Relay at ${running}\n`);
      return 0;
    }
  }
  const db = await openDatabase({ url: config.database.url, dataDir: config.dataDir, queryTimeoutMs: config.database.queryTimeoutMs });
  try {
    await migrate(db);
    await upsertAdminUser(db, username, password, role);
    await recordCliChange(db, 'relay admin-user set', username);
    process.stdout.write(`user ${username} saved\n`);
  } finally {
    await db.close();
  }
  return 0;
}
