import { useState } from "preact/hooks";
import type { Api } from "../api.js";
import { useLoad } from "../hooks.js";
import { REACTIONS } from "../view/call-query.js";
import { formatTime } from "./status.js";

interface Feedback {
  id: string;
  feedback_type: string;
  payload: Record<string, unknown>;
  created_at: string;
}

/** A call's feedback (newest first), and buttons to add a reaction or a note, as Weave's UI does. */
export function CallFeedback({ api, projectId, callId, onAdded }: { api: Api; projectId: string; callId: string; onAdded?: () => void }) {
  const weaveRef = `weave:///${projectId}/call/${callId}`;
  const list = useLoad(
    () =>
      api.trace<{ result: Feedback[] }>("/feedback/query", {
        project_id: projectId,
        query: { $expr: { $eq: [{ $getField: "weave_ref" }, { $literal: weaveRef }] } },
        sort_by: [{ field: "created_at", direction: "desc" }],
        limit: 50,
      }),
    [api, weaveRef],
  );
  const [note, setNote] = useState("");
  const [error, setError] = useState<string | undefined>();
  const add = async (feedbackType: string, payload: Record<string, unknown>) => {
    try {
      await api.trace("/feedback/create", { project_id: projectId, weave_ref: weaveRef, feedback_type: feedbackType, payload });
      setError(undefined);
      list.reload();
      onAdded?.();
    } catch (caught) {
      setError((caught as Error).message);
    }
  };
  return (
    <div class="feedback" data-testid="feedback">
      <div class="feedback-actions">
        {REACTIONS.map((emoji) => (
          <button key={emoji} type="button" title={`React with ${emoji}`} onClick={() => add("wandb.reaction.1", { emoji })}>
            {emoji}
          </button>
        ))}
        <form
          onSubmit={(event) => {
            event.preventDefault();
            if (note.trim()) void add("wandb.note.1", { note: note.trim() }).then(() => setNote(""));
          }}
        >
          <input placeholder="Add a note" value={note} onInput={(event) => setNote((event.target as HTMLInputElement).value)} />
        </form>
      </div>
      {error && <p class="error">{error}</p>}
      <ul class="feedback-list">
        {(list.data?.result ?? []).map((item) => (
          <li key={item.id}>
            <span class="muted">{formatTime(item.created_at)}</span> {describeFeedback(item)}
          </li>
        ))}
      </ul>
    </div>
  );
}

function describeFeedback(item: Feedback): string {
  if (item.feedback_type === "wandb.reaction.1" && typeof item.payload.emoji === "string") return item.payload.emoji;
  if (item.feedback_type === "wandb.note.1" && typeof item.payload.note === "string") return `“${item.payload.note}”`;
  return `${item.feedback_type}: ${JSON.stringify(item.payload)}`;
}
