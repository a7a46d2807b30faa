// Development only (Relay running from its TypeScript sources): an in-house plugin's
// `import ... from 'relay-gateway'` resolves to the sources the kernel runs, through the package's
// `relay-source` export condition, instead of the compiled dist/ that production uses.
export async function resolve(specifier, context, next) {
  if (specifier !== 'relay-gateway' && !specifier.startsWith('relay-gateway/')) return next(specifier, context);
  return next(specifier, { ...context, conditions: [...context.conditions, 'relay-source'] });
}
