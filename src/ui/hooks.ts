import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { parseRoute, type Route } from "./route.js";

/** The current hash route; re-renders on every hash change (links, back and forward). */
export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const onChange = () => setRoute(parseRoute(location.hash));
    addEventListener("hashchange", onChange);
    return () => removeEventListener("hashchange", onChange);
  }, []);
  return route;
}

export interface Loaded<T> {
  data: T | undefined;
  error: string | undefined;
  loading: boolean;
  reload: () => void;
}

/**
 * Runs `load` when `deps` change and, while `pollMs` is set, again every `pollMs` (for live data).
 * Answers of superseded runs are dropped, so a slow old request never overwrites a newer one.
 */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[], pollMs?: number): Loaded<T> {
  const key = JSON.stringify(deps);
  const [state, setState] = useState<{ key: string; data: T | undefined; error: string | undefined; loading: boolean }>({ key, data: undefined, error: undefined, loading: true });
  const generation = useRef(0);
  const [tick, setTick] = useState(0);
  const reload = useCallback(() => setTick((value) => value + 1), []);
  useEffect(() => {
    const mine = ++generation.current;
    load().then(
      (data) => mine === generation.current && setState({ key, data, error: undefined, loading: false }),
      (error: unknown) => mine === generation.current && setState((previous) => ({ key, data: previous.key === key ? previous.data : undefined, error: error instanceof Error ? error.message : String(error), loading: false })),
    );
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [key, tick]);
  useEffect(() => {
    if (!pollMs) return;
    const timer = setInterval(reload, pollMs);
    return () => clearInterval(timer);
  }, [pollMs, reload]);
  // After a change of deps, the previous page's data is not shown while the new one loads.
  if (state.key !== key) return { data: undefined, error: undefined, loading: true, reload };
  return { data: state.data, error: state.error, loading: state.loading, reload };
}
