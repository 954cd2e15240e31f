"""The worker protocol's client (src/server/workers/): plain urllib, so the trainer needs nothing
beyond torch, transformers and PEFT. Every call about a job names this worker; the server answers
409 once the worker no longer holds the job (cancelled, taken back), which raises LeaseLost."""

import json
import math
import os
import time
import urllib.error
import urllib.parse
import urllib.request


class ProtocolError(Exception):
    def __init__(self, status, detail):
        super().__init__(f"HTTP {status}: {detail}")
        self.status = status
        self.detail = detail


class LeaseLost(ProtocolError):
    """The job was cancelled, taken back after the lease expired, or ended: stop working on it."""


class WorkerClient:
    def __init__(self, server, key, worker, timeout=600, retries=5):
        self.base = server.rstrip("/") + "/v1/worker"
        self.key = key
        self.worker = worker
        self.timeout = timeout
        self.retries = retries

    def _request(self, method, path, body=None, raw=None, query=None):
        url = self.base + path
        if query:
            url += "?" + urllib.parse.urlencode(query)
        headers = {"Authorization": f"Bearer {self.key}"}
        data = None
        if raw is not None:
            data, headers["Content-Type"] = raw, "application/octet-stream"
        elif body is not None:
            data, headers["Content-Type"] = json.dumps(body, allow_nan=False).encode(), "application/json"
        for attempt in range(self.retries + 1):
            request = urllib.request.Request(url, data=data, method=method, headers=headers)
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:
                    payload = response.read()
                    if response.headers.get("content-type", "").startswith("application/json"):
                        return json.loads(payload)
                    return payload
            except urllib.error.HTTPError as error:
                detail = error.read().decode("utf8", "replace")
                try:
                    detail = json.loads(detail).get("detail", detail)
                except (ValueError, AttributeError):
                    pass
                if error.code == 409:
                    raise LeaseLost(error.code, detail) from None
                if error.code < 500 or attempt == self.retries:
                    raise ProtocolError(error.code, detail) from None
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                if attempt == self.retries:
                    raise
            time.sleep(min(2**attempt, 30))

    def claim(self, base_models):
        return self._request("POST", "/claim", {"worker": self.worker, "base_models": list(base_models)})["job"]

    def plan(self, job_id):
        return self._request("GET", f"/jobs/{job_id}/plan", query={"worker": self.worker})

    def adapter_file(self, job_id, which, name):
        return self._request("GET", f"/jobs/{job_id}/adapters/{which}/{name}", query={"worker": self.worker})

    def base_model_files(self, base_model):
        return self._request("GET", "/base-models/files", query={"base_model": base_model})["files"]

    def base_model_file(self, base_model, name):
        return self._request("GET", "/base-models/file", query={"base_model": base_model, "name": name})

    def heartbeat(self, job_id):
        return self._request("POST", f"/jobs/{job_id}/heartbeat", {"worker": self.worker})

    def event(self, job_id, event_type, data):
        clean = {key: value for key, value in data.items() if not (isinstance(value, float) and not math.isfinite(value))}
        return self._request("POST", f"/jobs/{job_id}/events", {"worker": self.worker, "type": event_type, "data": clean})

    def upload(self, job_id, path):
        with open(path, "rb") as handle:
            return self._request("PUT", f"/jobs/{job_id}/files/{os.path.basename(path)}", raw=handle.read(), query={"worker": self.worker})["digest"]

    def commit(self, job_id, files):
        return self._request("POST", f"/jobs/{job_id}/checkpoint", {"worker": self.worker, "files": files})

    def fail(self, job_id, message):
        return self._request("POST", f"/jobs/{job_id}/fail", {"worker": self.worker, "message": message[:10000]})

    def release(self, job_id):
        return self._request("POST", f"/jobs/{job_id}/release", {"worker": self.worker})
