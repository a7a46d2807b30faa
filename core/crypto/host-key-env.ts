// The environment variables a host key may read (valueFrom.kind env). A host key's value is sent
// to the host's base URL, which whoever edits the catalog chooses: a host key that named
// RELAY_MASTER_KEY or RELAY_ADMIN_TOKEN would hand Relay's own secrets to any URL (and an upstream
// that echoes a refused credential would hand them to the caller). So Relay's own variables are
// refused, when the key is written and again when it is read:
//  - every RELAY_* variable (master keys, admin token and password, ports, paths);
//  - DATABASE_URL and VALKEY_URL, and the variables the PostgreSQL client (PG*) and the AWS SDK
//    (AWS_*, the payload-s3 plugin's credential chain) read by themselves;
//  - every variable the config file substitutes (${NAME}), and every variable a plugin's options
//    name for the plugin to read (an option whose name ends in `Env`, log-clickhouse's
//    passwordEnv; the names under a `fromEnv` object, payload-s3's credentials): plugins' secrets;
//  - OTEL_*, read by the OpenTelemetry SDK by itself (OTEL_EXPORTER_OTLP_HEADERS carries a
//    tracing backend's token).
// Names are compared without regard to case: no vendor key needs a name that differs from one of
// these only by case.

const RESERVED_PREFIXES = ['RELAY_', 'PG', 'AWS_', 'OTEL_'];
const RESERVED_NAMES = new Set(['DATABASE_URL', 'VALKEY_URL']);

export class HostKeyEnvironment {
  private readonly configNames: Set<string>;

  /** `configNames`: the variables the config file substitutes. */
  constructor(private readonly env: Record<string, string | undefined>, configNames: Iterable<string> = []) {
    this.configNames = new Set([...configNames].map((name) => name.toUpperCase()));
  }

  /** Why a host key may not read `name`, or null when it may. */
  refusal(name: string): string | null {
    const upper = name.toUpperCase();
    if (RESERVED_NAMES.has(upper) || RESERVED_PREFIXES.some((prefix) => upper.startsWith(prefix))) {
      return `${name} is one of Relay's own settings (RELAY_*, DATABASE_URL, VALKEY_URL, PG*, AWS_*, OTEL_*), which host keys cannot read`;
    }
    if (this.configNames.has(upper)) return `${name} is read by Relay's config file (substituted, or named by a plugin's option), which host keys cannot read`;
    return null;
  }

  /** The variable's value; undefined when it is unset, empty or refused. */
  read(name: string): string | undefined {
    if (this.refusal(name) !== null) return undefined;
    return this.env[name] || undefined;
  }
}

/**
 * The variables plugin options name for their plugin to read: the value of an option whose name
 * ends in `Env` (`passwordEnv`) and every name under a `fromEnv` object, at any depth.
 */
export function envNamesInPluginOptions(plugins: ReadonlyArray<{ options?: unknown }>): string[] {
  const names: string[] = [];
  const walk = (value: unknown, key: string, underFromEnv: boolean): void => {
    if (typeof value === 'string') {
      if (underFromEnv || /.Env$/.test(key)) names.push(value);
    } else if (Array.isArray(value)) {
      for (const item of value) walk(item, key, underFromEnv);
    } else if (value !== null && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) walk(v, k, underFromEnv || k === 'fromEnv');
    }
  };
  for (const plugin of plugins) walk(plugin.options, '', false);
  return names;
}
