import type { Api } from "../api.js";
import { Chat } from "../components/chat.js";
import { formatNumber, StatusBadge } from "../components/status.js";
import { useLoad } from "../hooks.js";
import { formatRoute, type Route, withQuery } from "../route.js";
import type { Job, TrajectoryGroupPage } from "../types.js";
import { trajectoryMessages } from "../view/messages.js";

const GROUPS_PER_PAGE = 20;

/**
 * The rollout browser: a job's trajectory groups; the selected group's completions side by side,
 * each with its reward and advantage, as chat or as tokens coloured by the sampler's logprob (the
 * trainer's recomputed logprob and the difference on hover).
 */
export function RolloutsPage({ api, route, jobId }: { api: Api; route: Route; jobId: string }) {
  const offset = Math.max(0, Number(route.query.offset ?? 0) || 0);
  const selected = Number(route.query.group ?? offset) || 0;
  const tokens = route.query.view === "tokens";
  const job = useLoad(() => api.get<Job>(`/v1/preview/training-jobs/${jobId}`), [api, jobId]);
  const page = useLoad(() => api.get<TrajectoryGroupPage>(`/v1/preview/training-jobs/${jobId}/trajectory-groups?offset=${offset}&limit=${GROUPS_PER_PAGE}`), [api, jobId, offset]);
  const group = page.data?.data.find((candidate) => candidate.index === selected) ?? page.data?.data[0];
  return (
    <div>
      <p class="crumbs">
        <a href={formatRoute(["models"])}>Models</a>
        {job.data && (
          <>
            {" / "}
            <a href={formatRoute(["models", job.data.model_id], { job: job.data.id })}>model</a>
          </>
        )}
      </p>
      <h2>
        Rollouts of job <code>{jobId.slice(0, 8)}</code> {job.data && <StatusBadge status={job.data.status} />}
      </h2>
      {(job.error || page.error) && <p class="error">{job.error ?? page.error}</p>}
      {page.data && (
        <div class="rollouts">
          <aside class="group-list">
            <p class="muted">
              {page.data.total} groups · advantages {page.data.scale_rewards ? "scaled by the group's std" : "centred only"}
            </p>
            <ul>
              {page.data.data.map((candidate) => {
                const rewards = candidate.trajectories.map((trajectory) => trajectory.reward);
                return (
                  <li key={candidate.index} class={candidate.index === group?.index ? "selected" : ""}>
                    <a href={withQuery(route, { group: candidate.index })}>
                      Group {candidate.index}{" "}
                      <span class="muted">
                        · {rewards.length} · rewards {rewards.map((reward) => formatNumber(reward, 2)).join(", ")}
                      </span>
                    </a>
                  </li>
                );
              })}
            </ul>
            <div class="pager">
              {offset > 0 && <a href={withQuery(route, { offset: Math.max(0, offset - GROUPS_PER_PAGE), group: undefined })}>← previous</a>}
              {offset + GROUPS_PER_PAGE < page.data.total && <a href={withQuery(route, { offset: offset + GROUPS_PER_PAGE, group: undefined })}>next →</a>}
            </div>
          </aside>
          <section class="group">
            <div class="toolbar">
              <a href={withQuery(route, { view: undefined })} class={tokens ? "" : "active"}>
                Chat
              </a>
              <a href={withQuery(route, { view: "tokens" })} class={tokens ? "active" : ""}>
                Tokens by logprob
              </a>
            </div>
            {group && (
              <div class="side-by-side" data-testid="trajectories">
                {group.trajectories.map((trajectory, index) => (
                  <article key={index} class="trajectory">
                    <header>
                      #{index} · reward <b>{formatNumber(trajectory.reward)}</b> · advantage <b class={trajectory.advantage > 0 ? "positive" : trajectory.advantage < 0 ? "negative" : ""}>{formatNumber(trajectory.advantage, 3)}</b>
                    </header>
                    <Chat messages={trajectoryMessages(trajectory.messages_and_choices, trajectory.trainer_logprobs)} tokens={tokens} />
                  </article>
                ))}
                {group.exceptions.length > 0 && (
                  <article class="trajectory">
                    <header class="error">{group.exceptions.length} exception(s)</header>
                    <pre>{JSON.stringify(group.exceptions, null, 2)}</pre>
                  </article>
                )}
              </div>
            )}
          </section>
        </div>
      )}
      {page.loading && !page.data && <p class="muted">Loading…</p>}
    </div>
  );
}
