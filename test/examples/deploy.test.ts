// examples/deploy and the Dockerfile, validated without a container engine (none runs here):
// every file parses; the Compose services and the Kubernetes Deployment give Relay every
// variable examples/config/scaled.yaml requires, from the places they name (env, Secrets),
// and `relay check` accepts the config with exactly that environment; probes, ports, volumes,
// replicas and secret names are where the README says.
import { readFileSync, existsSync, mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { parse, parseAllDocuments } from 'yaml';
import { relayCheck } from '../support/relay-check.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const deploy = path.join(root, 'examples/deploy');
const read = (p: string) => readFileSync(path.join(root, p), 'utf8');

const scaledYaml = read('examples/config/scaled.yaml');
/** Variables scaled.yaml needs: ${VAR} without a default, outside comments. */
const requiredVars = [...new Set([...scaledYaml.split('\n').filter((l) => !l.trim().startsWith('#')).join('\n')
  .matchAll(/\$\{([A-Z_][A-Z0-9_]*)\}/g)].map((m) => m[1]!))];
/** Variables the plugins read by name (passwordEnv) or through the AWS SDK. */
const namedVars = ['CLICKHOUSE_PASSWORD', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY'];
const relayVars = ['RELAY_MASTER_KEY', 'RELAY_ADMIN_TOKEN', 'RELAY_ADMIN_USERNAME', 'RELAY_ADMIN_PASSWORD'];

function docs(file: string): any[] {
  const all = parseAllDocuments(read(file));
  for (const d of all) if (d.errors.length > 0) throw new Error(`${file}: ${d.errors[0]!.message}`);
  return all.map((d) => d.toJS()).filter((d) => d !== null);
}

function tmpConfig(text: string): { file: string; cleanup(): void } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'relay-deploy-'));
  const file = path.join(dir, 'relay.yaml');
  writeFileSync(file, text);
  return { file, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

t.test('scaled.yaml requires what the deployments must provide', async (t) => {
  t.same([...requiredVars].sort(), ['CLICKHOUSE_URL', 'DATABASE_URL', 'S3_BUCKET', 'S3_ENDPOINT', 'VALKEY_URL']);
});

t.test('Dockerfile: slim multi-stage, non-root, healthcheck with node, volumes, ports, entrypoint', async (t) => {
  const dockerfile = read('Dockerfile');
  const stages = [...dockerfile.matchAll(/^FROM (\S+) AS (\S+)$/gm)].map((m) => m[2]);
  t.same(stages, ['build', 'prod-deps', 'runtime']);
  t.match(dockerfile, /ARG NODE_IMAGE=node:22-bookworm-slim/);
  t.match(dockerfile, /RUN npm install --ignore-scripts[^\n]*\n[\s\S]*RUN npm run build:ui/, 'npm install then the UI build');
  t.match(dockerfile, /npm install --omit=dev/, 'the runtime gets production dependencies only');
  t.match(dockerfile, /COPY --from=build \/app\/admin-ui\/dist \.\/admin-ui\/dist/);
  const user = [...dockerfile.matchAll(/^USER (\S+)$/gm)].map((m) => m[1]);
  t.same(user, ['node'], 'runs as the unprivileged node user');
  t.match(dockerfile, /^VOLUME \["\/etc\/relay", "\/var\/lib\/relay"\]$/m);
  t.match(dockerfile, /^EXPOSE 8080 8081$/m);
  t.match(dockerfile, /^HEALTHCHECK [\s\S]*CMD \["node", "-e", "fetch\('http:\/\/127\.0\.0\.1:' \+ \(process\.env\.RELAY_PORT \|\| 8080\) \+ '\/livez'\)/m);
  t.notMatch(dockerfile.split('\n').filter((l) => !l.startsWith('#')).join('\n'), /curl|wget/, 'no curl or wget in a slim image');
  t.match(dockerfile, /^ENTRYPOINT \["\/bin\/sh", "bin\/container-entrypoint\.sh", "node", "bin\/relay\.js", "start"\]$/m);
  t.match(dockerfile, /RELAY_CONFIG=\/etc\/relay\/relay\.yaml/);
  t.match(dockerfile, /RELAY_DATA_DIR=\/var\/lib\/relay/);
  for (const dir of ['bin', 'core', 'plugins', 'config']) t.match(dockerfile, new RegExp(`^COPY ${dir} \\./${dir}$`, 'm'), `copies ${dir}`);
  const ignored = read('.dockerignore').split('\n').map((l) => l.trim());
  for (const p of ['node_modules', '.git', 'test', 'admin-ui/dist']) t.ok(ignored.includes(p), `.dockerignore leaves out ${p}`);
});

t.test('the HEALTHCHECK command works against a live /livez', async (t) => {
  const { createServer } = await import('node:http');
  const server = createServer((req, res) => res.writeHead(req.url === '/livez' ? 200 : 404).end());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  const port = (server.address() as { port: number }).port;
  const script = /CMD \["node", "-e", "(.*)"\]\n/.exec(read('Dockerfile'))![1]!.replace(/\\"/g, '"');
  // Asynchronously: the server answering /livez runs in this process.
  const { execFile } = await import('node:child_process');
  const run = (relayPort: string) => new Promise<number>((resolve) => {
    execFile(process.execPath, ['-e', script], { env: { ...process.env, RELAY_PORT: relayPort }, timeout: 10_000 }, (err) => resolve(err ? Number(err.code ?? 1) : 0));
  });
  t.equal(await run(String(port)), 0, 'exit 0 while /livez answers 200');
  t.equal(await run('1'), 1, 'exit 1 when nothing answers');
});

t.test('Compose: two replicas, the four backing services, the config and the variables', async (t) => {
  const compose = parse(read('examples/deploy/compose.yaml'), { merge: true });
  for (const name of ['postgres', 'clickhouse', 'valkey', 'minio', 'relay-1', 'relay-2']) t.ok(compose.services[name], `service ${name}`);
  const published = new Set<string>();
  for (const name of ['relay-1', 'relay-2']) {
    const svc = compose.services[name];
    t.equal(svc.build.context, '../..');
    t.ok(existsSync(path.join(deploy, svc.build.context, svc.build.dockerfile)), 'the build context has the Dockerfile');
    const configMount = (svc.volumes as string[]).find((v) => v.includes(':/etc/relay/relay.yaml'))!;
    t.equal(path.resolve(deploy, configMount.split(':')[0]!), path.join(root, 'examples/config/scaled.yaml'), `${name} mounts scaled.yaml`);
    t.ok((svc.volumes as string[]).some((v) => v.endsWith(':/var/lib/relay')), `${name} has a data volume`);
    t.same((svc.ports as string[]).map((p) => p.split(':')[1]).sort(), ['8080', '8081']);
    for (const p of svc.ports as string[]) published.add(p.split(':')[0]!);
    for (const v of [...requiredVars, ...namedVars, ...relayVars]) t.ok(v in svc.environment, `${name} sets ${v}`);
    t.same(Object.keys(svc.depends_on).sort(), ['clickhouse', 'minio-bucket', 'postgres', 'valkey']);
    t.ok(Number.parseInt(svc.stop_grace_period, 10) > 30, 'stop grace above the 30 s drain');
  }
  t.equal(published.size, 4, 'the replicas publish distinct host ports');
  t.match(compose.services['relay-1'].environment.DATABASE_URL, /@postgres:5432\//);
  t.match(compose.services['relay-1'].environment.VALKEY_URL, /^redis:\/\/valkey:6379/);
  t.match(compose.services['relay-1'].environment.S3_ENDPOINT, /^http:\/\/minio:9000$/);
  for (const name of ['relay-1', 'relay-2']) t.match(compose.services[name].healthcheck.test.join(' '), "fetch('http://127.0.0.1:8080/readyz')", `${name}: healthcheck on /readyz`);
  t.match(compose.services['minio-bucket'].entrypoint.join(' '), `mb --ignore-existing local/${compose.services['relay-1'].environment.S3_BUCKET}`);
  const example = read('examples/deploy/.env.example');
  for (const m of read('examples/deploy/compose.yaml').matchAll(/\$\{([A-Z_]+):\?/g)) t.match(example, new RegExp(`^${m[1]}=`, 'm'), `.env.example names ${m[1]}`);

  // `relay check` with the environment of relay-1 (Compose's ${...} filled with dummy values).
  const env = Object.fromEntries(Object.entries(compose.services['relay-1'].environment as Record<string, string>)
    .map(([k, v]) => [k, String(v).replace(/\$\{[^}]+\}/g, 'dummy')]));
  const res = await relayCheck(path.join(root, 'examples/config/scaled.yaml'), env);
  t.equal(res.code, 0, res.err);
});

t.test('Kubernetes: Deployment, Services, ConfigMap, Secrets', async (t) => {
  const all = ['configmap.yaml', 'secrets.yaml', 'deployment.yaml', 'services.yaml'].flatMap((f) => docs(`examples/deploy/kubernetes/${f}`));
  const of = (kind: string) => all.filter((d) => d.kind === kind);
  const deployment = of('Deployment')[0]!;
  const pod = deployment.spec.template.spec;
  const container = pod.containers[0]!;
  t.equal(deployment.spec.replicas, 3);
  t.same(deployment.spec.selector.matchLabels, deployment.spec.template.metadata.labels);

  const ports = Object.fromEntries((container.ports as Array<{ name: string; containerPort: number }>).map((p) => [p.name, p.containerPort]));
  t.same(ports, { inference: 8080, control: 8081 });
  // Liveness on the control port's /livez (reachable while the inference port is at its
  // connection cap), readiness on /readyz: neither fails while Postgres is down (the snapshot serves).
  for (const [probe, path, port] of [['readinessProbe', '/readyz', 'inference'], ['livenessProbe', '/livez', 'control'], ['startupProbe', '/readyz', 'inference']]) {
    t.same(container[probe!].httpGet, { path, port }, `${probe} on ${port} ${path}`);
  }
  t.ok(container.livenessProbe.failureThreshold * container.livenessProbe.periodSeconds >= 60, 'liveness tolerates a short database outage');
  t.ok(container.resources.requests.cpu && container.resources.requests.memory && container.resources.limits.memory, 'resources');
  t.equal(pod.securityContext.runAsNonRoot, true);
  t.ok(pod.terminationGracePeriodSeconds > 30 + 5, 'grace above preStop + drain');

  const secrets = new Map<string, Record<string, string>>(of('Secret').map((s) => [s.metadata.name, s.stringData]));
  t.ok(secrets.get('relay-master-key')?.RELAY_MASTER_KEY, 'Secret relay-master-key has RELAY_MASTER_KEY');
  t.ok(secrets.get('relay-admin-token')?.RELAY_ADMIN_TOKEN, 'Secret relay-admin-token has RELAY_ADMIN_TOKEN');
  const fromSecrets: Record<string, string> = {};
  for (const ref of container.envFrom as Array<{ secretRef: { name: string } }>) {
    const secret = secrets.get(ref.secretRef.name);
    t.ok(secret, `envFrom names an existing Secret (${ref.secretRef.name})`);
    Object.assign(fromSecrets, secret);
  }
  const plain = Object.fromEntries((container.env as Array<{ name: string; value: string }>).map((e) => [e.name, e.value]));
  for (const v of [...requiredVars, ...namedVars, ...relayVars]) t.ok(v in plain || v in fromSecrets, `the pod gets ${v}`);

  const configMap = of('ConfigMap').find((c) => c.metadata.name === pod.volumes.find((v: any) => v.name === 'config').configMap.name)!;
  t.equal(configMap.data['relay.yaml'], scaledYaml, 'the ConfigMap carries examples/config/scaled.yaml verbatim');
  const mount = container.volumeMounts.find((m: any) => m.name === 'config');
  t.equal(path.posix.join(mount.mountPath, 'relay.yaml'), plain.RELAY_CONFIG, 'mounted where RELAY_CONFIG points');
  t.equal(container.volumeMounts.find((m: any) => m.name === 'data').mountPath, plain.RELAY_DATA_DIR);

  const services = of('Service');
  t.same(services.map((s) => s.spec.ports[0].targetPort).sort(), ['control', 'inference'], 'one Service per listener');
  for (const s of services) t.same(s.spec.selector, deployment.spec.template.metadata.labels, `${s.metadata.name} selects the pods`);
  t.same(services.map((s) => s.spec.ports[0].port).sort(), [8080, 8081]);

  const config = tmpConfig(configMap.data['relay.yaml']);
  t.teardown(config.cleanup);
  const res = await relayCheck(config.file, { ...fromSecrets, ...plain, RELAY_CONFIG: config.file });
  t.equal(res.code, 0, `relay check accepts the ConfigMap with the pod's environment: ${res.err}`);
});
