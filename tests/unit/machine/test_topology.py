"""The CPU layout policy on synthetic machines: 2, 4, 16 and 64 CPUs, SMT on and off, 2 NUMA nodes,
and the sysfs reader on a fake /sys."""

from __future__ import annotations

from pathlib import Path

import pytest

from wsgibench.machine.topology import (
    build,
    layout,
    parse_cpulist,
    read,
    scaled_layout,
    scaling_steps,
)


def machine(cores: int, smt: bool = False, nodes: int = 1):
    """Linux numbering: CPU i and i + cores are SMT siblings; nodes split the cores in order."""
    threads = 2 if smt else 1
    cpus = list(range(cores * threads))
    groups = [tuple(c + k * cores for k in range(threads)) for c in range(cores)]
    per_node = cores // nodes
    node_sets = [
        tuple(c for g in groups[i * per_node : (i + 1) * per_node] for c in g) for i in range(nodes)
    ]
    return build(cpus, groups, node_sets)


def test_cpulist():
    assert parse_cpulist("0-3,8,10-11\n") == [0, 1, 2, 3, 8, 10, 11]
    assert parse_cpulist("5") == [5]


def test_two_cpus_as_before():
    lay = layout(machine(2))
    assert (lay.server_cpus, lay.engine_cpus, lay.policy) == ([0], [1], "first-cpu")


def test_one_cpu_is_shared_and_said():
    lay = layout(machine(1))
    assert lay.server_cpus == lay.engine_cpus == [0] and "shares" in lay.note


@pytest.mark.parametrize("cores", [4, 16, 64])
def test_half_and_half_without_smt(cores):
    lay = layout(machine(cores))
    assert lay.policy == "half"
    assert lay.server_cpus == list(range(cores // 2))
    assert lay.engine_cpus == list(range(cores // 2, cores))


@pytest.mark.parametrize("cores", [4, 8, 32])
def test_smt_siblings_stay_on_one_side(cores):
    topo = machine(cores, smt=True)
    lay = layout(topo)
    assert not set(lay.server_cpus) & set(lay.engine_cpus)
    assert len(lay.server_cpus) == len(lay.engine_cpus) == cores
    for core in topo.cores:  # no core is split between the two
        assert set(core) <= set(lay.server_cpus) or set(core) <= set(lay.engine_cpus)
    assert 0 in lay.server_cpus and cores in lay.server_cpus  # CPU 0 with its sibling


def test_two_numa_nodes_one_each():
    topo = machine(16, smt=True, nodes=2)
    lay = layout(topo)
    assert {topo.node_of(c) for c in lay.server_cpus} == {0}
    assert {topo.node_of(c) for c in lay.engine_cpus} == {1}


def test_given_sets_are_kept_and_the_other_side_gets_whole_free_cores():
    topo = machine(4, smt=True)  # cores (0,4) (1,5) (2,6) (3,7)
    lay = layout(topo, server=[0])
    assert lay.policy == "given" and lay.server_cpus == [0]
    assert lay.engine_cpus == [1, 2, 3, 5, 6, 7]  # not 4: CPU 0's sibling
    both = layout(topo, server=[0, 1], engine=[1, 2])
    assert "shares CPU(s) [1]" in both.note


def test_scaling_steps_leave_the_engine_half():
    assert scaling_steps(machine(16)) == (
        [1, 2, 4, 8],
        ["16 server CPUs: the engine needs 8 more, this machine has 16 CPUs"],
    )
    steps, skipped = scaling_steps(machine(2))
    assert steps == [1] and skipped == [
        "2 server CPUs: the engine needs 1 more, this machine has 2 CPUs"
    ]
    lay = scaled_layout(machine(8, smt=True), 4)
    # 4 CPUs are 2 whole cores with their siblings; the engine gets the 6 cores left
    assert lay.server_cpus == [0, 1, 8, 9]
    assert lay.engine_cpus == [2, 3, 4, 5, 6, 7, 10, 11, 12, 13, 14, 15]


def test_read_from_sysfs(tmp_path: Path):
    sys_dir = tmp_path / "system"
    for cpu, siblings in {0: "0,2", 1: "1,3", 2: "0,2", 3: "1,3"}.items():
        d = sys_dir / "cpu" / f"cpu{cpu}" / "topology"
        d.mkdir(parents=True)
        (d / "thread_siblings_list").write_text(siblings + "\n")
    for node, cpus in {0: "0,2", 1: "1,3"}.items():
        d = sys_dir / "node" / f"node{node}"
        d.mkdir(parents=True)
        (d / "cpulist").write_text(cpus + "\n")
    topo = read([0, 1, 2, 3], sys_dir)
    assert topo.cores == ((0, 2), (1, 3)) and topo.nodes == ((0, 2), (1, 3)) and topo.smt
    only = read([0, 1], sys_dir)  # an affinity mask hides CPUs 2 and 3
    assert only.cores == ((0,), (1,)) and only.cpus == (0, 1)
