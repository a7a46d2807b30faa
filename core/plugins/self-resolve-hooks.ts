// Module resolve hook used only when Relay runs compiled (dist/): an in-house plugin's
// `import ... from 'relay-gateway'` must reach the running kernel's plugin API, not a second copy
// of core compiled from the TypeScript sources the package name points at.
interface HookData {
  api: string;
}

interface ResolveContext {
  conditions: string[];
  parentURL?: string;
}

type NextResolve = (specifier: string, context: ResolveContext) => Promise<{ url: string }>;

let api = '';

export async function initialize(data: HookData): Promise<void> {
  api = data.api;
}

export async function resolve(specifier: string, context: ResolveContext, next: NextResolve): Promise<{ url: string; shortCircuit?: boolean }> {
  if (specifier === 'relay-gateway') return { url: api, shortCircuit: true };
  // The shared vocabularies: relay-gateway/canonical and the like, beside the API module.
  const sub = /^relay-gateway\/(canonical|catalog|log-backends|tracing|clients)$/.exec(specifier);
  if (sub) return { url: new URL(`plugin-api/${sub[1]}.js`, api).href, shortCircuit: true };
  return next(specifier, context);
}
