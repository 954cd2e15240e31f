/** The API key lives in sessionStorage: it survives reloads of this tab and is gone when the tab closes. */
const KEY_NAME = "flywheel.apiKey";

export function storedKey(): string | null {
  return sessionStorage.getItem(KEY_NAME);
}

export function storeKey(key: string): void {
  sessionStorage.setItem(KEY_NAME, key);
}

export function forgetKey(): void {
  sessionStorage.removeItem(KEY_NAME);
}

/** The trace API's base path, which the server writes into the page. */
export function traceBasePath(): string {
  const meta = document.querySelector<HTMLMetaElement>('meta[name="flywheel-trace-base-path"]');
  const value = meta?.content ?? "";
  return value.startsWith("/") ? value : "/trace";
}
