#!/usr/bin/env python3
"""Writes the synthetic example package under examples/Example.

Five retinanet runs of a made-up closed-division system. They converge at
epoch 4 (as the v5.0 reference does at batch size 256), with a different
seed and time to train each. result_1.txt logs a weight decay of 0.0001
where the reference fixes 0: one non-compliant run, which the olympic
tolerance accepts, so the package passes with that finding reported.

Regenerate: python3 examples/make_example.py
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
PKG = os.path.join(HERE, "Example")
SYSTEM = "example_system"


def record(t, event_type, key, value, lineno, **meta):
    md = {"file": "train.py", "lineno": lineno}
    md.update(meta)
    return ":::MLLOG " + json.dumps({
        "namespace": "", "time_ms": t, "event_type": event_type,
        "key": key, "value": value, "metadata": md})


def run(i, seed, epoch_ms, weight_decay):
    t = 1760000000000 + i * 1_000_000_000
    lines = ["[launcher] starting rank 0"]
    n = [100]

    def ev(key, value=None, kind="POINT_IN_TIME", step=7, **meta):
        nonlocal t
        t += step
        n[0] += 1
        lines.append(record(t, kind, key, value, n[0], **meta))

    ev("cache_clear", True)
    ev("init_start", kind="INTERVAL_START")
    for key, value in [
        ("submission_benchmark", "retinanet"), ("submission_org", "Example"),
        ("submission_division", "closed"), ("submission_status", "onprem"),
        ("submission_platform", SYSTEM), ("seed", seed),
        ("global_batch_size", 256), ("train_samples", 1170301),
        ("eval_samples", 24781), ("gradient_accumulation_steps", 1),
        ("opt_name", "adam"), ("opt_base_learning_rate", 0.0001),
        ("opt_weight_decay", weight_decay),
        ("opt_learning_rate_warmup_epochs", 1),
        ("opt_learning_rate_warmup_factor", 0.001),
    ]:
        ev(key, value)
    ev("init_stop", kind="INTERVAL_END")
    ev("run_start", kind="INTERVAL_START")
    for epoch, acc in enumerate([0.21, 0.29, 0.315, 0.331, 0.3405 + i * 0.0002]):
        ev("epoch_start", kind="INTERVAL_START", epoch_num=epoch)
        ev("epoch_stop", kind="INTERVAL_END", step=epoch_ms, epoch_num=epoch)
        ev("eval_start", kind="INTERVAL_START", epoch_num=epoch)
        ev("eval_accuracy", acc, epoch_num=epoch)
        ev("eval_stop", kind="INTERVAL_END", epoch_num=epoch)
    ev("run_stop", kind="INTERVAL_END", status="success")
    return "\n".join(lines) + "\n"


def main():
    folder = os.path.join(PKG, "results", SYSTEM, "retinanet")
    os.makedirs(folder, exist_ok=True)
    os.makedirs(os.path.join(PKG, "systems"), exist_ok=True)
    runs = [(1234, 60000, 0.0), (5678, 61200, 0.0001), (9012, 59400, 0.0),
            (3456, 60600, 0.0), (7890, 62400, 0.0)]
    for i, (seed, epoch_ms, wd) in enumerate(runs):
        with open(os.path.join(folder, f"result_{i}.txt"), "w") as f:
            f.write(run(i, seed, epoch_ms, wd))
    system = {
        "submitter": "Example", "division": "closed", "status": "Available on-premise",
        "system_name": "Example system (1 node, 8 accelerators)",
        "number_of_nodes": "1", "host_processors_per_node": "2",
        "host_processor_model_name": "Example CPU", "host_processor_core_count": "64",
        "host_processor_vcpu_count": "", "host_processor_frequency": "",
        "host_processor_caches": "", "host_processor_interconnect": "",
        "host_memory_capacity": "2 TB", "host_storage_type": "NVMe SSD",
        "host_storage_capacity": "8 TB", "host_networking": "",
        "host_networking_topology": "", "host_memory_configuration": "",
        "accelerators_per_node": "8", "accelerator_model_name": "Example accelerator",
        "accelerator_host_interconnect": "", "accelerator_frequency": "",
        "accelerator_on-chip_memories": "", "accelerator_memory_configuration": "HBM",
        "accelerator_memory_capacity": "80 GB", "accelerator_interconnect": "",
        "accelerator_interconnect_topology": "", "cooling": "air", "hw_notes": "",
        "framework": "PyTorch", "framework_name": "pytorch",
        "other_software_stack": {}, "operating_system": "Linux", "sw_notes": "",
    }
    with open(os.path.join(PKG, "systems", SYSTEM + ".json"), "w") as f:
        json.dump(system, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
