import type { JobStatus } from "../types.js";

export function StatusBadge({ status }: { status: JobStatus | string }) {
  return <span class={`badge status-${status}`}>{status}</span>;
}

export function formatNumber(value: number | undefined | null, digits = 4): string {
  if (value === undefined || value === null || !Number.isFinite(value)) return "—";
  if (value !== 0 && (Math.abs(value) < 1e-3 || Math.abs(value) >= 1e6)) return value.toExponential(2);
  return Number(value.toPrecision(digits)).toString();
}

export function formatTime(iso: string | null | undefined): string {
  if (!iso) return "—";
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
}

/** Copies text to the clipboard, selecting it as a fallback where the clipboard API is unavailable. */
export function CopyButton({ text, label = "Copy" }: { text: string; label?: string }) {
  const copy = async (event: Event) => {
    const button = event.currentTarget as HTMLButtonElement;
    try {
      await navigator.clipboard.writeText(text);
      button.textContent = "Copied";
    } catch {
      button.textContent = "Select and copy";
    }
    setTimeout(() => (button.textContent = label), 1500);
  };
  return (
    <button type="button" class="small" onClick={copy} title={text}>
      {label}
    </button>
  );
}
