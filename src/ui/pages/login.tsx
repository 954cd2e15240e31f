import { useState } from "preact/hooks";
import { Api, ApiError } from "../api.js";
import type { ProjectList } from "../types.js";

/** One password field; the key is checked against the API before it is kept. */
export function LoginPage({ traceBase, onLogin, notice }: { traceBase: string; onLogin: (key: string) => void; notice?: string }) {
  const [key, setKey] = useState("");
  const [error, setError] = useState<string | undefined>(notice);
  const [checking, setChecking] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    const candidate = key.trim();
    if (!candidate) return setError("Enter an API key.");
    setChecking(true);
    try {
      await new Api(candidate, traceBase).get<ProjectList>("/v1/preview/projects");
      onLogin(candidate);
    } catch (caught) {
      setError(caught instanceof ApiError && caught.status === 401 ? "That API key was not accepted: it is unknown or revoked." : `Could not check the key: ${(caught as Error).message}`);
    } finally {
      setChecking(false);
    }
  };
  return (
    <div class="login">
      <form onSubmit={submit}>
        <h1>Flywheel</h1>
        <label for="api-key">API key</label>
        <input id="api-key" name="api-key" type="password" autocomplete="current-password" value={key} onInput={(event) => setKey((event.target as HTMLInputElement).value)} autofocus />
        <button type="submit" disabled={checking}>
          {checking ? "Checking…" : "Open"}
        </button>
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        <p class="muted">The key stays in this browser tab only (session storage).</p>
      </form>
    </div>
  );
}
