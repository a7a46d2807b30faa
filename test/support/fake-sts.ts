// A fake AWS STS that answers AssumeRoleWithWebIdentity (the web identity of EKS's IRSA) in
// STS's XML, issuing a new key pair each time and adding it to the keys a fake Bedrock accepts.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AwsKey } from './fake-bedrock.ts';

export interface FakeSts {
  url: string;
  /** Web identity tokens presented, in order. */
  tokens: string[];
  /** Lifetime of the credentials issued next. */
  lifetimeMs: number;
  close(): Promise<void>;
}

export async function startFakeSts(accepts: AwsKey[]): Promise<FakeSts> {
  let issued = 0;
  const state = { tokens: [] as string[], lifetimeMs: 3_600_000 };
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => { body += c.toString('utf8'); });
    req.on('end', () => {
      const params = new URLSearchParams(body);
      if (params.get('Action') !== 'AssumeRoleWithWebIdentity' || !params.get('WebIdentityToken')) {
        res.writeHead(400, { 'content-type': 'text/xml' });
        res.end('<ErrorResponse><Error><Type>Sender</Type><Code>InvalidAction</Code><Message>only AssumeRoleWithWebIdentity</Message></Error></ErrorResponse>');
        return;
      }
      state.tokens.push(params.get('WebIdentityToken')!);
      const key: AwsKey = { accessKeyId: `ASIAWEBIDENTITY${++issued}`, secretAccessKey: `webSecret${issued}/abc+def`, sessionToken: `webToken${issued}` };
      accepts.push(key);
      const expiration = new Date(Date.now() + state.lifetimeMs).toISOString();
      res.writeHead(200, { 'content-type': 'text/xml' });
      res.end(`<AssumeRoleWithWebIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><AssumeRoleWithWebIdentityResult>
<Credentials><AccessKeyId>${key.accessKeyId}</AccessKeyId><SecretAccessKey>${key.secretAccessKey}</SecretAccessKey><SessionToken>${key.sessionToken}</SessionToken><Expiration>${expiration}</Expiration></Credentials>
<SubjectFromWebIdentityToken>system:serviceaccount:relay:relay</SubjectFromWebIdentityToken>
<AssumedRoleUser><Arn>arn:aws:sts::123456789012:assumed-role/relay/relay-session</Arn><AssumedRoleId>AROAFAKE:relay-session</AssumedRoleId></AssumedRoleUser>
</AssumeRoleWithWebIdentityResult><ResponseMetadata><RequestId>fake-sts</RequestId></ResponseMetadata></AssumeRoleWithWebIdentityResponse>`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get tokens() { return state.tokens; },
    get lifetimeMs() { return state.lifetimeMs; },
    set lifetimeMs(ms: number) { state.lifetimeMs = ms; },
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}
