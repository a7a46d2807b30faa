// Which environment variables a host key may read (core/crypto/host-key-env.ts), and the
// credential resolver refusing the others even for a key written before they were refused.
import t from 'tap';
import { HostKeyEnvironment } from '../../core/crypto/host-key-env.ts';
import { Sealer } from '../../core/crypto/sealing.ts';
import { CredentialResolver } from '../../core/pipeline/credentials.ts';
import type { HostKey } from '../../core/catalog/kinds.ts';

const env = {
  OPENAI_API_KEY: 'sk-vendor', RELAY_MASTER_KEY: 'master-secret-value', RELAY_ADMIN_TOKEN: 'token', DATABASE_URL: 'postgres://u:p@db/relay',
  PGPASSWORD: 'pg', AWS_SECRET_ACCESS_KEY: 'aws', CH_PASSWORD: 'clickhouse', EMPTY: '',
};
const hostKeyEnv = new HostKeyEnvironment(env, ['CH_PASSWORD']);

t.test('vendor variables are read; Relay\'s own and the config\'s are refused', async (t) => {
  t.equal(hostKeyEnv.refusal('OPENAI_API_KEY'), null);
  t.equal(hostKeyEnv.read('OPENAI_API_KEY'), 'sk-vendor');
  for (const name of ['RELAY_MASTER_KEY', 'Relay_Admin_Token', 'RELAY_ANYTHING_NEW', 'DATABASE_URL', 'database_url', 'VALKEY_URL', 'PGPASSWORD', 'AWS_SECRET_ACCESS_KEY']) {
    t.match(hostKeyEnv.refusal(name), /Relay's own settings/, name);
    t.equal(hostKeyEnv.read(name), undefined, `${name} is not read`);
  }
  t.match(hostKeyEnv.refusal('CH_PASSWORD'), /config file/);
  t.match(hostKeyEnv.refusal('ch_password'), /config file/);
  t.equal(hostKeyEnv.read('CH_PASSWORD'), undefined);
  t.equal(hostKeyEnv.read('EMPTY'), undefined, 'empty is unset');
});

t.test('the resolver refuses a stored key that names a reserved variable', async (t) => {
  const resolver = new CredentialResolver(new Sealer(null), hostKeyEnv);
  const key = (name: string) => ({ spec: { valueFrom: { kind: 'env', env: name } } }) as unknown as HostKey;
  t.same(resolver.resolve(key('OPENAI_API_KEY')), { value: 'sk-vendor' });
  const refused = resolver.resolve(key('RELAY_MASTER_KEY'));
  t.match(refused, { error: /Relay's own settings/ });
  t.notOk(JSON.stringify(refused).includes('master-secret-value'), 'the value is not in the reason');
  t.same(resolver.resolve(key('NOT_SET')), { error: 'environment variable NOT_SET is not set' });
  t.same(resolver.resolve(key('')), { error: 'no environment variable is named' });
});
