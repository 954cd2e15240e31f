"""The worker loop: claim a job, download what it needs, train it on every rank, report its events,
upload the adapter and commit it, heartbeating all the while. Rank 0 alone talks to the server; the
other ranks receive the job through torch.distributed and read the files rank 0 downloaded (the
cache directory must be shared by the ranks: one machine, or shared storage)."""

import os
import shutil
import signal
import socket
import threading
import time
import traceback

import safetensors
import torch

from .client import LeaseLost, ProtocolError, WorkerClient
from .model import LoraModel
from .optimizer import OPTIMIZER_FILE, read_state
from .steps import Ranks, run_plan

ADAPTER_FILES = ["adapter_config.json", "adapter_model.safetensors"]


def init_ranks():
    """torchrun's environment → a process group (NCCL on GPUs, gloo on the CPU); one rank without it."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world == 1:
        return Ranks()
    cuda = torch.cuda.is_available()
    torch.distributed.init_process_group(backend="nccl" if cuda else "gloo")
    device = f"cuda:{int(os.environ.get('LOCAL_RANK', '0'))}" if cuda else "cpu"
    return Ranks(torch.distributed.get_rank(), torch.distributed.get_world_size(), device)


def device_for(ranks):
    if torch.cuda.is_available():
        local = int(os.environ.get("LOCAL_RANK", "0"))
        torch.cuda.set_device(local)
        return f"cuda:{local}"
    return "cpu"


def broadcast(ranks, value):
    if ranks.world == 1:
        return value
    box = [value]
    torch.distributed.broadcast_object_list(box, src=0)
    return box[0]


def any_rank(ranks, flag):
    """True on every rank when it is true on any (a stop request seen by rank 0 reaches all)."""
    if ranks.world == 1:
        return flag
    return float(ranks.all_reduce(torch.tensor([1.0 if flag else 0.0]))) > 0


class Worker:
    def __init__(self, server, key, base_models, cache_dir, dtype="float32", name=None, log=print):
        self.ranks = init_ranks()
        self.device = device_for(self.ranks)
        self.base_models = base_models
        self.cache_dir = os.path.abspath(cache_dir)
        self.dtype = dtype
        self.log = log if self.ranks.rank == 0 else (lambda *_: None)
        name = name or f"{socket.gethostname()}:{os.getpid()}"
        self.client = WorkerClient(server, key, name) if self.ranks.rank == 0 else None
        self.shutting_down = False

    def run(self, poll_seconds=2.0, max_jobs=None, exit_when_idle=False):
        """Takes jobs until stopped (SIGTERM/SIGINT give the job in progress back), `max_jobs` are
        done, or (with exit_when_idle) no job is waiting."""
        if self.ranks.rank == 0:
            for sig in (signal.SIGTERM, signal.SIGINT):
                signal.signal(sig, self._stop)
        done = 0
        while max_jobs is None or done < max_jobs:
            job = None
            if self.ranks.rank == 0 and not self.shutting_down:
                job = self.client.claim(self.base_models)
            job = broadcast(self.ranks, {"job": job, "stop": self.shutting_down})
            if job["stop"]:
                break
            if job["job"] is None:
                if exit_when_idle:
                    break
                time.sleep(poll_seconds)
                continue
            self.train_job(job["job"])
            done += 1
        if self.ranks.world > 1:
            torch.distributed.destroy_process_group()
        return done

    def _stop(self, *_):
        self.shutting_down = True

    def train_job(self, job):
        job_id = job["id"]
        self.log(f"job {job_id}: {job['kind']} on {job['model']['base_model']} from step {job['base_step']}")
        heartbeat = Heartbeat(self.client, job_id, job["lease_seconds"]) if self.ranks.rank == 0 else None
        try:
            setup = self._prepare(job) if self.ranks.rank == 0 else None
            setup = broadcast(self.ranks, setup)
            if setup.get("gone"):
                return
            outcome = self._train(job, setup, heartbeat)
            if self.ranks.rank == 0 and outcome is not None:
                self._commit(job_id, outcome)
        except LeaseLost as lost:
            self.log(f"job {job_id}: stopped, {lost.detail}")
        except Exception as error:  # noqa: BLE001 - any failure ends the job with its message
            traceback.print_exc()
            if self.ranks.rank == 0:
                try:
                    self.client.fail(job_id, f"PyTorch trainer: {type(error).__name__}: {error}")
                except ProtocolError:
                    pass
        finally:
            if heartbeat:
                heartbeat.stop()

    def _prepare(self, job):
        """Rank 0: the plan and the local paths of the base model, the start adapter and the KL reference."""
        job_id = job["id"]
        try:
            plan = self.client.plan(job_id)
        except LeaseLost as lost:
            self.log(f"job {job_id}: {lost.detail}")
            return {"gone": True}
        base_dir = self._base_model_dir(job["model"]["base_model"])
        job_dir = os.path.join(self.cache_dir, "jobs", job_id)
        shutil.rmtree(job_dir, ignore_errors=True)
        start_dir = self._download_adapter(job_id, "start", os.path.join(job_dir, "start"), optional=[OPTIMIZER_FILE])
        reference_dir = self._download_adapter(job_id, "reference", os.path.join(job_dir, "reference")) if plan["kl_reference"] == "adapter" else None
        return {"plan": plan, "base_dir": base_dir, "start_dir": start_dir, "reference_dir": reference_dir, "out_dir": os.path.join(job_dir, "out")}

    def _base_model_dir(self, base_model):
        directory = os.path.join(self.cache_dir, "base-models", base_model.replace("/", "--"))
        complete = os.path.join(directory, ".complete")
        if os.path.exists(complete):
            return directory
        os.makedirs(directory, exist_ok=True)
        for entry in self.client.base_model_files(base_model):
            target = os.path.join(directory, entry["name"])
            if os.path.exists(target) and os.path.getsize(target) == entry["size"]:
                continue
            with open(target + ".part", "wb") as handle:
                handle.write(self.client.base_model_file(base_model, entry["name"]))
            os.replace(target + ".part", target)
        open(complete, "w").close()
        return directory

    def _download_adapter(self, job_id, which, directory, optional=()):
        os.makedirs(directory, exist_ok=True)
        for name in ADAPTER_FILES + list(optional):
            try:
                data = self.client.adapter_file(job_id, which, name)
            except ProtocolError as error:
                if error.status == 404 and name in optional:
                    continue
                raise
            with open(os.path.join(directory, name), "wb") as handle:
                handle.write(data)
        return directory

    def _train(self, job, setup, heartbeat):
        """Every rank: trains the plan; returns (steps, output dir) on rank 0, None when stopped."""
        plan = setup["plan"]
        model = LoraModel(setup["base_dir"], setup["start_dir"], dtype=self.dtype, device=self.device)
        optimizer_path = os.path.join(setup["start_dir"], OPTIMIZER_FILE)
        state = read_state(optimizer_path) if os.path.exists(optimizer_path) else None
        reference = read_factors(os.path.join(setup["reference_dir"], "adapter_model.safetensors"), model) if setup["reference_dir"] else None
        should_stop = lambda: any_rank(self.ranks, bool(heartbeat and heartbeat.lost))  # noqa: E731
        steps = run_plan(model, plan, state, reference, self.ranks, should_stop)
        announced = None
        taken = 0
        while True:
            try:
                kind, value = next(steps)
            except StopIteration as finished:
                optimizer = finished.value
                break
            if kind == "started":
                announced = value
                if self.ranks.rank == 0:
                    self.client.event(job["id"], "training_started", {"num_sequences": value})
            else:
                taken += 1
                if self.ranks.rank == 0:
                    self.client.event(job["id"], "gradient_step", value)
                    self.log(f"job {job['id']}: step {taken}/{announced} loss {value['loss']:.6f}")
        if taken != announced:
            return None  # stopped: the job was cancelled or taken back
        if self.ranks.rank != 0:
            return None
        if taken == 0:
            return {"files": None}
        out_dir = setup["out_dir"]
        model.save(out_dir)
        optimizer.save(os.path.join(out_dir, OPTIMIZER_FILE))
        return {"files": [os.path.join(out_dir, name) for name in ADAPTER_FILES + [OPTIMIZER_FILE]]}

    def _commit(self, job_id, outcome):
        files = None
        if outcome["files"] is not None:
            files = {os.path.basename(path): self.client.upload(job_id, path) for path in outcome["files"]}
        step = self.client.commit(job_id, files)["step"]
        self.log(f"job {job_id}: committed step {step}")


def read_factors(path, model):
    """Another adapter's factors in the model's parameter order (a KL reference)."""
    with safetensors.safe_open(path, framework="pt") as handle:
        names = {name.replace(".weight", "").split("layers.", 1)[1]: name for name in handle.keys()}
        tensors = []
        for layer, linear, _pair in model.modules:
            path_name = "self_attn" if linear in ("q_proj", "k_proj", "v_proj", "o_proj") else "mlp"
            for factor in ("A", "B"):
                key = f"{layer}.{path_name}.{linear}.lora_{factor}"
                if key not in names:
                    raise ValueError(f"the KL reference adapter has no {key}")
                tensors.append(handle.get_tensor(names[key]))
        return tensors


class Heartbeat:
    """Renews the lease every third of it on a thread; `lost` turns true when the server says the
    worker no longer holds the job (cancelled, taken back)."""

    def __init__(self, client, job_id, lease_seconds):
        self.client, self.job_id = client, job_id
        self.interval = max(0.05, lease_seconds / 3)
        self.lost = False
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        while not self._stopped.wait(self.interval):
            try:
                if not self.client.heartbeat(self.job_id)["owned"]:
                    self.lost = True
                    return
            except Exception:  # noqa: BLE001 - a failed heartbeat is retried; the lease decides
                pass

    def stop(self):
        self._stopped.set()
        self._thread.join(timeout=5)
