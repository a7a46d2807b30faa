// admin-ui: serves the dashboard (admin-ui/dist) at the control listener's root.
import path from 'node:path';
import { definePlugin, Type, PACKAGE_ROOT } from '../../core/plugin-api.ts';
import { serveDashboard } from './serve-dashboard.ts';

const DEFAULT_ROOT = path.join(PACKAGE_ROOT, 'admin-ui', 'dist');

export default definePlugin({
  name: 'admin-ui',
  kind: 'admin',
  description: 'The admin dashboard: a single-page app served at the control listener root, with deep links.',
  options: Type.Object({
    root: Type.String({ default: DEFAULT_ROOT, minLength: 1, description: 'Directory of the dashboard build. Defaults to admin-ui/dist of this package.' }),
  }, { additionalProperties: false }),
  async register(relay, options) {
    await serveDashboard(relay.control, { root: options.root, log: relay.log });
  },
});
