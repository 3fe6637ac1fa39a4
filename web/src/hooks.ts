import { useEffect, useState } from 'preact/hooks';
import { get } from './api';

export interface Loaded<T> {
  data: T | undefined;
  error: Error | undefined;
  reload: () => void;
}

/** GETs `path` (again when it or `version` changes); the page shows the data, or the error in words. */
export function useApi<T>(path: string | undefined, version = 0): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: Error }>({});
  const [tick, setTick] = useState(0);
  useEffect(() => {
    if (!path) return;
    let live = true;
    get<T>(path).then(
      (data) => live && setState({ data }),
      (error: Error) => live && setState({ error }),
    );
    return () => {
      live = false;
    };
  }, [path, version, tick]);
  return { data: state.data, error: state.error, reload: () => setTick((n) => n + 1) };
}

/** The hash route: `#/servers/tool/mcp__a__b` → ['servers', 'tool', 'mcp__a__b']. */
export function useRoute(): string[] {
  const parse = () =>
    location.hash
      .replace(/^#\/?/, '')
      .split('/')
      .filter(Boolean)
      .map((part) => decodeURIComponent(part));
  const [route, setRoute] = useState(parse);
  useEffect(() => {
    const changed = () => setRoute(parse());
    addEventListener('hashchange', changed);
    return () => removeEventListener('hashchange', changed);
  }, []);
  return route;
}

export function href(...parts: string[]): string {
  return `#/${parts.map((p) => encodeURIComponent(p)).join('/')}`;
}
