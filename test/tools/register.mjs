// Loaded by tap before every test file (package.json tap.node-arg): Relay code that imports an
// optional package that only test/tools installs (log-clickhouse's embedded mode imports `chdb`)
// finds it there when Relay's own node_modules lacks it, as an operator's `npm install chdb` would.
import { register } from 'node:module';

register('./resolve-hooks.mjs', import.meta.url);
