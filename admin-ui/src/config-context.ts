// The server's /config.json, read at boot, for any component that needs it.
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { RelayConfig } from './api/types.ts';

export const ConfigContext = createContext<RelayConfig | null>(null);

export function useRelayConfig(): RelayConfig | null {
  return useContext(ConfigContext);
}
