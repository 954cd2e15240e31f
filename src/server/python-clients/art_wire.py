"""Drives every preview route and chat completions through openai-python, as ART's serverless client does.

A client built on openai-python's ``AsyncAPIClient`` (its default headers, retries and error mapping)
with resources on ``AsyncAPIResource`` that call ``_post``, ``_get``, ``_get_api_list`` with
``AsyncCursorPage`` and ``_delete``; chat goes through the ``openai`` package itself. Reads
FLYWHEEL_BASE_URL (ending in /v1), FLYWHEEL_API_KEY and FLYWHEEL_BASE_MODEL; prints one JSON
summary line; any failed expectation raises (non-zero exit).
"""

import asyncio
import json
import os
from typing import Any

import httpx
import openai
from openai import AsyncOpenAI, BaseModel
from openai._base_client import AsyncAPIClient, make_request_options
from openai._resource import AsyncAPIResource
from openai.pagination import AsyncCursorPage


class Model(BaseModel):
    id: str
    entity: str
    project: str
    name: str
    base_model: str


class Checkpoint(BaseModel):
    id: str
    step: int


class TrainingJob(BaseModel):
    id: str
    status: str


class TrainingJobEvent(BaseModel):
    id: str
    type: str
    data: dict[str, Any]


class Models(AsyncAPIResource):
    async def create(self, **body: Any) -> Model:
        return await self._post("/preview/models", cast_to=Model, body=body)

    async def delete(self, model_id: str) -> dict[str, Any]:
        return await self._delete(f"/preview/models/{model_id}", cast_to=dict[str, Any])

    async def log(self, model_id: str, **body: Any) -> dict[str, Any]:
        return await self._post(f"/preview/models/{model_id}/log", cast_to=dict[str, Any], body=body)

    def checkpoints(self, model_id: str, **query: Any):
        return self._get_api_list(
            f"/preview/models/{model_id}/checkpoints",
            page=AsyncCursorPage[Checkpoint],
            model=Checkpoint,
            options=make_request_options(query=query),
        )

    async def delete_checkpoints(self, model_id: str, steps: list[int]) -> dict[str, Any]:
        return await self._delete(f"/preview/models/{model_id}/checkpoints", cast_to=dict[str, Any], body={"steps": steps})


class TrainingJobs(AsyncAPIResource):
    async def create(self, **body: Any) -> TrainingJob:
        return await self._post("/preview/training-jobs", cast_to=TrainingJob, body=body)

    async def create_sft(self, **body: Any) -> TrainingJob:
        return await self._post("/preview/sft-training-jobs", cast_to=TrainingJob, body=body)

    async def retrieve(self, job_id: str) -> TrainingJob:
        return await self._get(f"/preview/training-jobs/{job_id}", cast_to=TrainingJob)

    async def cancel(self, job_id: str) -> TrainingJob:
        return await self._post(f"/preview/training-jobs/{job_id}/cancel", cast_to=TrainingJob)

    def events(self, job_id: str, **query: Any):
        return self._get_api_list(
            f"/preview/training-jobs/{job_id}/events",
            page=AsyncCursorPage[TrainingJobEvent],
            model=TrainingJobEvent,
            options=make_request_options(query=query),
        )


class Artifacts(AsyncAPIResource):
    async def create(self, **body: Any) -> dict[str, Any]:
        return await self._post("/preview/artifacts", cast_to=dict[str, Any], body=body)


class Client(AsyncAPIClient):
    def __init__(self, *, api_key: str, base_url: str) -> None:
        self.api_key = api_key
        super().__init__(version=openai.__version__, base_url=base_url, _strict_response_validation=False, max_retries=2)
        self.models = Models(self)  # type: ignore[arg-type]
        self.training_jobs = TrainingJobs(self)  # type: ignore[arg-type]
        self.artifacts = Artifacts(self)  # type: ignore[arg-type]

    @property
    def auth_headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.api_key}"}

    # Newer openai-python releases build headers from this hook (per security scheme) instead.
    def _auth_headers(self, security: object = None) -> dict[str, str]:
        return self.auth_headers

    def _make_status_error(self, err_msg: str, *, body: object, response: httpx.Response) -> openai.APIStatusError:
        # ART's mapping: the body's `error` key if present, else the whole body.
        data = body.get("error", body) if isinstance(body, dict) else body
        status = response.status_code
        error_class = STATUS_ERRORS.get(status, openai.InternalServerError if status >= 500 else openai.APIStatusError)
        return error_class(err_msg, response=response, body=data)


STATUS_ERRORS: dict[int, type[openai.APIStatusError]] = {
    400: openai.BadRequestError,
    401: openai.AuthenticationError,
    403: openai.PermissionDeniedError,
    404: openai.NotFoundError,
    409: openai.ConflictError,
    422: openai.UnprocessableEntityError,
    429: openai.RateLimitError,
}


async def expect_status(status: int, call) -> Any:
    try:
        await call
    except openai.APIStatusError as error:
        assert error.status_code == status, f"expected {status}, got {error.status_code}: {error.body}"
        return error.body
    raise AssertionError(f"expected a {status}")


async def sample(chat: AsyncOpenAI, model: str, seed: int, *, exact: bool) -> Any:
    return await chat.chat.completions.create(
        model=model,
        messages=[{"role": "user", "content": "Say a word."}],
        max_tokens=2,
        temperature=1,
        seed=seed,
        logprobs=True,
        extra_body={"return_token_ids": True} if exact else None,
    )


async def wait_for_end(client: Client, job_id: str) -> list[TrainingJobEvent]:
    events: list[TrainingJobEvent] = []
    after: str | None = None
    for _ in range(600):
        page_query = {"after": after} if after else {}
        async for event in client.training_jobs.events(job_id, **page_query):
            events.append(event)
            after = event.id
        if any(event.type in ("training_ended", "training_failed") for event in events):
            return events
        await asyncio.sleep(0.2)
    raise AssertionError("the training job did not end")


async def main() -> None:
    base_url = os.environ["FLYWHEEL_BASE_URL"]
    api_key = os.environ["FLYWHEEL_API_KEY"]
    base_model = os.environ["FLYWHEEL_BASE_MODEL"]
    summary: dict[str, Any] = {"openai_version": openai.__version__}
    chat = AsyncOpenAI(base_url=base_url, api_key=api_key, max_retries=0)
    client = Client(api_key=api_key, base_url=base_url)

    # Chat completions through the openai package: a plain, a streamed and a listed model.
    served = [model.id async for model in chat.models.list()]
    assert base_model in served, served
    completion = await sample(chat, base_model, 1, exact=True)
    summary["chat_finish_reason"] = completion.choices[0].finish_reason
    stream = await chat.chat.completions.create(model=base_model, messages=[{"role": "user", "content": "Hi"}], max_tokens=2, stream=True)
    summary["stream_chunks"] = len([chunk async for chunk in stream])
    bad_seed = await expect_status(422, chat.chat.completions.create(model=base_model, messages=[{"role": "user", "content": "Hi"}], seed=2**63))
    summary["bad_seed_loc"] = bad_seed["detail"][0]["loc"]

    # Models: register (again with return_existing), a conflict, an unknown id.
    model = await client.models.create(entity=None, project="python-wire", name="agent", base_model=base_model, return_existing=True)
    again = await client.models.create(project="python-wire", name="agent", base_model=base_model, return_existing=True)
    assert again.id == model.id
    conflict = await expect_status(409, client.models.create(project="python-wire", name="agent", base_model=base_model))
    summary["conflict_detail"] = conflict["detail"]
    await expect_status(404, client.models.delete("00000000-0000-4000-8000-000000000000"))
    summary["checkpoints_before"] = [checkpoint.step async for checkpoint in client.models.checkpoints(model.id)]

    # Rollouts of the model, as messages_and_choices and as exchanges; logged, then trained.
    inference_name = f"wandb-artifact:///{model.entity}/python-wire/agent"
    legacy, exchanges = [], []
    for seed in range(4):
        sampled = await sample(chat, inference_name, 10 + seed, exact=seed % 2 == 0)
        reward = 1.0 if seed < 2 else 0.0
        legacy.append({"messages_and_choices": [{"role": "user", "content": "Say a word."}, sampled.choices[0].model_dump(mode="json")], "reward": reward})
        request = {"model": inference_name, "messages": [{"role": "user", "content": "Say a word."}]}
        exchange = {"request": request, "response": sampled.model_dump(mode="json"), "start_time": "2026-01-01T00:00:00Z", "end_time": "2026-01-01T00:00:01Z"}
        exchanges.append({"exchanges": {"chat_completions": [exchange]}, **({"reward": reward} if reward else {})})
    groups = [{"trajectories": legacy}, {"trajectories": exchanges, "metadata": {"scenario": {"tags": ["x"]}}}]
    logged = await client.models.log(model.id, split="val", trajectory_groups=groups)
    summary["logged_keys"] = sorted(logged)
    job = await client.training_jobs.create(model_id=model.id, trajectory_groups=groups, experimental_config={"learning_rate": 1e-2})
    events = await wait_for_end(client, job.id)
    summary["event_types"] = [event.type for event in events]
    summary["job_status"] = (await client.training_jobs.retrieve(job.id)).status
    summary["checkpoints_after"] = [checkpoint.step async for checkpoint in client.models.checkpoints(model.id, order="desc", limit=1)]

    # SFT from an uploaded artifact, then cancelled (a body-less POST).
    rows = "\n".join(json.dumps({"messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": f"Hello {i}"}]}) for i in range(3))
    artifact = await client.artifacts.create(project="python-wire", name="sft-data", files=[{"name": "train.jsonl", "text": rows}])
    sft = await client.training_jobs.create_sft(model_id=model.id, training_data_url=artifact["url"], config={"batch_size": 1})
    cancelled = await client.training_jobs.cancel(sft.id)
    summary["sft_cancel_status"] = cancelled.status

    # Checkpoint deletion (a DELETE with a body), then the model (a body-less DELETE).
    deleted = await client.models.delete_checkpoints(model.id, [999])
    summary["not_found_steps"] = deleted["not_found_steps"]
    summary["model_deleted"] = (await client.models.delete(model.id))["model_id"] == model.id
    await expect_status(404, client.training_jobs.retrieve("00000000-0000-4000-8000-000000000000"))
    unauthorized = Client(api_key="fw_wrong", base_url=base_url)
    summary["unauthorized_detail"] = await expect_status(401, unauthorized.models.create(project="p", name="n", base_model=base_model))
    await client.close()
    await unauthorized.close()
    await chat.close()
    print(json.dumps(summary))


if __name__ == "__main__":
    asyncio.run(main())
