import { useState } from "preact/hooks";
import { capString, entriesOf, ENTRY_CAP, kindOf, preview, STRING_CAP } from "../view/json-cap.js";

/**
 * A collapsible JSON tree. Children render only when their node is open, long strings and long
 * lists are capped (with a button for the rest), and the whole value can be downloaded raw.
 */
export function JsonView({ value, name, openDepth = 1 }: { value: unknown; name?: string; openDepth?: number }) {
  return (
    <div class="json">
      <JsonNode label={name ?? ""} value={value} depth={0} openDepth={openDepth} />
    </div>
  );
}

function JsonNode({ label, value, depth, openDepth }: { label: string; value: unknown; depth: number; openDepth: number }) {
  const kind = kindOf(value);
  const [open, setOpen] = useState(depth < openDepth);
  const [entryCap, setEntryCap] = useState(ENTRY_CAP);
  if (kind !== "object" && kind !== "array") {
    return (
      <div class="json-row" style={{ paddingLeft: `${depth}em` }}>
        {label && <span class="json-key">{label}: </span>}
        <Scalar value={value} />
      </div>
    );
  }
  const { entries, more } = open ? entriesOf(value, entryCap) : { entries: [], more: 0 };
  return (
    <div>
      <div class="json-row" style={{ paddingLeft: `${depth}em` }}>
        <button type="button" class="json-toggle" aria-expanded={open} onClick={() => setOpen(!open)}>
          {open ? "▾" : "▸"}
        </button>
        {label && <span class="json-key">{label}: </span>}
        <span class="muted">{preview(value)}</span>
      </div>
      {entries.map(([key, child]) => (
        <JsonNode key={key} label={key} value={child} depth={depth + 1} openDepth={openDepth} />
      ))}
      {more > 0 && (
        <div style={{ paddingLeft: `${depth + 1}em` }}>
          <button type="button" class="small" onClick={() => setEntryCap(entryCap + ENTRY_CAP * 10)}>
            {more} more…
          </button>
        </div>
      )}
    </div>
  );
}

function Scalar({ value }: { value: unknown }) {
  const [cap, setCap] = useState(STRING_CAP);
  if (typeof value !== "string") return <span class={`json-${kindOf(value)}`}>{String(value ?? "null")}</span>;
  const { text, omitted } = capString(value, cap);
  return (
    <span class="json-string">
      {JSON.stringify(text).slice(0, omitted > 0 ? -1 : undefined)}
      {omitted > 0 && (
        <button type="button" class="small" onClick={() => setCap(cap * 10)}>
          … {omitted.toLocaleString()} more characters
        </button>
      )}
    </span>
  );
}

/** A link that saves the value as a .json file, built only when clicked. */
export function DownloadJson({ value, filename }: { value: unknown; filename: string }) {
  const download = () => {
    const url = URL.createObjectURL(new Blob([JSON.stringify(value, null, 2)], { type: "application/json" }));
    const anchor = document.createElement("a");
    anchor.href = url;
    anchor.download = filename;
    anchor.click();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  };
  return (
    <button type="button" class="small" onClick={download}>
      Download raw
    </button>
  );
}
