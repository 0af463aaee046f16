"""Load from several hosts through Dask distributed: connect to a scheduler (or start a local
cluster of N workers), check every load host before the first cell, and run each cell's load as one
share per host behind a common start, merged exactly. `ClusterEngine` is an `Engine` like the local
one, so a cell's life does not change; a host that dies or stops reporting makes the cell invalid,
and nothing is re-run or moved to another host."""

from __future__ import annotations

import ipaddress
import logging
import time
import uuid
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from wsgibench.errors import EnvironmentProblem, LoadHostLost, UsageError
from wsgibench.results.engine_plan import EnginePlan
from wsgibench.results.engine_result import EngineResult
from wsgibench.results.merge import merge_results
from wsgibench.run import hostwork
from wsgibench.run.localhosts import LocalWorkers
from wsgibench.run.scheduler_view import present_workers

CLOCK_SAMPLES = 8
START_LEAD_S = 0.3  # the start instant is this far ahead at first (more when round trips are slow)
MAX_LEAD_S = 3.0
STOP_GRACE_S = 10.0  # how long the other hosts get to stop after one is lost


@dataclass(frozen=True)
class LoadHost:
    """One Dask worker acting as a load host, as the preflight found it."""

    address: str  # the Dask worker's address: how the host is named everywhere
    info: dict[str, Any]
    clock_offset_ns: int  # the host's wall clock minus the controller's
    clock_uncertainty_ns: int  # half the best round trip (0 on the controller's own machine)
    same_machine: bool  # shares the controller's kernel (and CPUs, and clock)
    same_network: bool  # shares the controller's network namespace (its loopback)

    @property
    def cpus(self) -> list[int]:
        return list(self.info.get("cpus") or [])

    @property
    def own_cpus(self) -> bool:
        """Its engine runs on its worker's CPUs: on another machine, or pinned on this one (a
        worker on this machine free to use every CPU gets the study's engine CPUs)."""
        return not self.same_machine or len(self.cpus) < int(self.info.get("cpu_count") or 0)

    def as_dict(self) -> dict[str, Any]:
        return {
            "address": self.address,
            **self.info,
            "clock_offset_s": self.clock_offset_ns / 1e9,
            "clock_uncertainty_s": self.clock_uncertainty_ns / 1e9,
            "same_machine": self.same_machine,
            "same_network": self.same_network,
        }


def _quiet_dask() -> None:
    for name in ("distributed", "distributed.worker", "distributed.nanny", "tornado"):
        logging.getLogger(name).setLevel(logging.CRITICAL)


class LoadHosts:
    """The Dask cluster the load comes from: a scheduler's address, or N local workers."""

    def __init__(self, address: str | None = None, local_workers: int | None = None):
        import dask
        from distributed import Client

        _quiet_dask()
        self.local: LocalWorkers | None = None
        # A lost task fails at once instead of being re-run on another worker.
        dask.config.set({"distributed.scheduler.allowed-failures": 0})
        try:
            if address:
                self.client = Client(address, timeout="10s", set_as_default=False)
            else:
                self.local = LocalWorkers(local_workers or 1)
                self.client = Client(self.local.address, timeout="10s", set_as_default=False)
                self.local.wait(self.client)
        except (OSError, TimeoutError) as exc:
            raise EnvironmentProblem(
                f"cannot reach the Dask scheduler at {address}: {exc}"
            ) from None
        self.hosts: list[LoadHost] = []

    def workers(self) -> list[str]:
        return sorted(present_workers(self.client))

    def preflight(self) -> list[LoadHost]:
        """Check every worker against this controller; refuse a host that differs."""
        here = hostwork.preflight()
        addresses = self.workers()
        if not addresses:
            raise EnvironmentProblem("the Dask cluster has no workers to send load from")
        found = self.client.run(hostwork.preflight, workers=addresses)
        hosts = []
        for address in addresses:
            info = found[address]
            for part in ("wsgibench", "engine"):
                if info[part] != here[part]:
                    raise UsageError(
                        f"load host {address} ({info['hostname']}) runs {part} {info[part]}, "
                        f"this controller {here[part]}: install the same build on every host"
                    )
            same_machine = info["boot_id"] == here["boot_id"] and bool(here["boot_id"])
            offset, uncertainty = (0, 0) if same_machine else self._clock(address)
            hosts.append(
                LoadHost(
                    address,
                    info,
                    offset,
                    uncertainty,
                    same_machine,
                    same_machine and info["net_namespace"] == here["net_namespace"],
                )
            )
        self.hosts = hosts
        return hosts

    def _clock(self, address: str) -> tuple[int, int]:
        """The host's clock offset from the best of several round trips (NTP's estimate)."""
        best: tuple[int, int] | None = None
        for _ in range(CLOCK_SAMPLES):
            t0 = time.time_ns()
            remote = self.client.run(hostwork.clock_now, workers=[address])[address]
            t1 = time.time_ns()
            sample = (t1 - t0, remote - (t0 + t1) // 2)
            if best is None or sample[0] < best[0]:
                best = sample
        assert best is not None
        return best[1], best[0] // 2

    def reclock(self) -> None:
        """Each host's clock offset measured again (before each cell's run): a clock drifts, and
        a start instant given in the host's clock is only as good as the offset's latest
        estimate."""
        fresh = []
        for h in self.hosts:
            if not h.same_machine:
                offset, uncertainty = self._clock(h.address)
                h = replace(h, clock_offset_ns=offset, clock_uncertainty_ns=uncertainty)
            fresh.append(h)
        self.hosts = fresh

    def close(self) -> None:
        self.client.close()
        if self.local is not None:
            self.local.close()


def check_target(hosts: list[LoadHost], target: str) -> None:
    """Load hosts outside the controller's network cannot reach a server on its loopback."""
    if ipaddress.ip_address(target).is_loopback:
        away = [h.address for h in hosts if not h.same_network]
        if away:
            raise UsageError(
                f"load hosts {', '.join(away)} are not on this machine's network: they cannot "
                f"reach a server on {target}; give the server an address they reach "
                "(--server-host)"
            )


class ClusterEngine:
    """Runs each plan as one share per load host, started together, merged exactly."""

    def __init__(self, hosts: LoadHosts, skew_bound_s: float = 0.010):
        self.hosts = hosts
        self.skew_bound_s = skew_bound_s
        self.lead_s = START_LEAD_S

    def run(self, plan: EnginePlan) -> EngineResult:
        self.hosts.reclock()
        hosts = self.hosts.hosts
        check_target(hosts, plan.target.host)
        parts = [
            # the controller's engine CPUs are not those of a host with CPUs of its own
            replace(
                part, cpus=tuple(host.cpus), threads=part.model.threads_for(max(1, len(host.cpus)))
            )
            if host.own_cpus
            else part
            for part, host in zip(plan.split(len(hosts)), hosts, strict=False)
        ]
        run = _CellRun(self.hosts, hosts[: len(parts)], parts, plan.bound_s, self.lead_s)
        outputs = run.go()
        result = self._merged(plan, hosts[: len(parts)], outputs)
        self.lead_s = next_lead(self.lead_s, [o.get("start_margin_s") for o in outputs])
        return result

    def _merged(
        self, plan: EnginePlan, hosts: list[LoadHost], outputs: list[dict[str, Any]]
    ) -> EngineResult:
        docs = [o["result"] for o in outputs]
        # each host's real start, in the controller's clock
        starts = [
            float(d["started_unix_s"]) - h.clock_offset_ns / 1e9
            for d, h in zip(docs, hosts, strict=True)
        ]
        merged = merge_results(plan, docs, starts, [h.address for h in hosts])
        first = min(starts)
        merged["load_hosts"] = [
            {
                "address": h.address,
                "hostname": o["host"],
                "started_unix_s": s,
                "start_after_first_s": s - first,
                "clock_offset_s": h.clock_offset_ns / 1e9,
                "clock_uncertainty_s": h.clock_uncertainty_ns / 1e9,
                "runqueue_wait_s": o["runqueue_wait_s"],
                "start_margin_s": o.get("start_margin_s"),
                "began_late_s": o.get("began_late_s"),
                "result": o["result"],
            }
            for h, o, s in zip(hosts, outputs, starts, strict=True)
        ]
        merged["start_skew_s"] = max(starts) - first
        merged["start_skew_bound_s"] = self.skew_bound_s
        # The offsets' error moves a host's real start as much as the instant it was given (it
        # cancels out of the corrected starts): the skew is known only to within it.
        merged["start_skew_uncertainty_s"] = 2 * max(h.clock_uncertainty_ns for h in hosts) / 1e9
        result = EngineResult.from_dict(merged)
        waits = [o["runqueue_wait_s"] for o in outputs if o["runqueue_wait_s"] is not None]
        return result.with_runqueue_wait(max(waits) if waits else None)


def next_lead(lead_s: float, margins: list[float | None]) -> float:
    """The lead for the next cell: when the start reached a host with less than a third of the
    lead to spare (or late), twice the time it took, up to MAX_LEAD_S; it never shrinks."""
    known = [m for m in margins if m is not None]
    if not known or min(known) >= lead_s / 3:
        return lead_s
    return min(MAX_LEAD_S, max(lead_s, 2 * (lead_s - min(known))))


class _CellRun:
    """One plan's run over the hosts: submit, wait for every `ready`, give one start, gather."""

    def __init__(
        self,
        cluster: LoadHosts,
        hosts: list[LoadHost],
        parts: list[EnginePlan],
        bound: float,
        lead_s: float,
    ):
        from distributed import Event, Queue, Variable

        self.client, self.hosts, self.parts, self.bound = cluster.client, hosts, parts, bound
        self.lead_s = lead_s
        key = f"wsgibench-{uuid.uuid4().hex[:12]}"
        ready, start, stop = hostwork.names(key)
        self.key = key
        self.ready = Queue(ready, client=self.client)
        self.start = Variable(start, client=self.client)
        self.stop = Event(stop, client=self.client)
        self.futures: list[Any] = []

    def go(self) -> list[dict[str, Any]]:
        try:
            self._submit()
            self._await_ready()
            self.start.set(time.time_ns() + int(self.lead_s * 1e9))
            return self._gather()
        except BaseException:
            self._call_off()
            raise
        finally:
            try:
                self.start.delete()
            except Exception:  # noqa: BLE001 - the scheduler may be gone; nothing to clean then
                pass

    def _submit(self) -> None:
        # a trace's schedule file goes with each share: a load host has not got it
        path = self.parts[0].model.schedule
        schedule = Path(path).read_bytes() if path else None
        for i, (part, host) in enumerate(zip(self.parts, self.hosts, strict=True)):
            offset = host.clock_offset_ns
            self.futures.append(
                self.client.submit(
                    hostwork.run_share,
                    part.to_dict(),
                    self.key,
                    i,
                    offset,
                    self.bound,
                    schedule,
                    key=f"{self.key}-share-{i}",
                    workers=[host.address],
                    allow_other_workers=False,
                    retries=0,
                    pure=False,
                )
            )

    def _lost(self) -> str | None:
        """Why a host is lost: it left the cluster, or its task failed."""
        present = present_workers(self.client)
        for host, future in zip(self.hosts, self.futures, strict=True):
            if host.address not in present:
                return f"load host {host.address} left the cluster (died or stopped reporting)"
            if future.status in ("error", "cancelled"):
                why = future.exception(timeout=5) if future.status == "error" else "cancelled"
                return f"load host {host.address} failed: {why}"
        return None

    def _await_ready(self) -> None:
        deadline = time.monotonic() + hostwork.READY_TIMEOUT_S + 30
        ready: set[int] = set()
        while len(ready) < len(self.hosts):
            lost = self._lost()
            if lost:
                raise LoadHostLost(lost)
            try:
                ready.add(int(self.ready.get(timeout=0.5)))
            except TimeoutError:
                if time.monotonic() > deadline:
                    late = [h.address for i, h in enumerate(self.hosts) if i not in ready]
                    raise LoadHostLost(
                        f"load host(s) {', '.join(late)} did not say ready in time"
                    ) from None

    def _gather(self) -> list[dict[str, Any]]:
        deadline = time.monotonic() + self.bound + self.lead_s + 30
        while not all(f.status == "finished" for f in self.futures):
            lost = self._lost()
            if lost:
                raise LoadHostLost(lost)
            if time.monotonic() > deadline:
                late = [
                    h.address
                    for h, f in zip(self.hosts, self.futures, strict=True)
                    if f.status != "finished"
                ]
                raise LoadHostLost(f"load host(s) {', '.join(late)} stopped reporting")
            time.sleep(0.1)
        return [f.result() for f in self.futures]

    def _call_off(self) -> None:
        """Stop every host's engine, before or after the start, and wait a little for them."""
        try:
            self.start.set(-1)  # hosts still waiting for the start give up
            self.stop.set()
            deadline = time.monotonic() + STOP_GRACE_S
            while time.monotonic() < deadline:
                present = present_workers(self.client)
                running = [
                    f
                    for h, f in zip(self.hosts, self.futures, strict=False)
                    if f.status == "pending" and h.address in present
                ]
                if not running:
                    break
                time.sleep(0.1)
            for f in self.futures:
                f.cancel()
        except Exception:  # noqa: BLE001 - a scheduler that is gone cannot be told; hosts' engines end with their stdin
            pass
