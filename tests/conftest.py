"""Shared fixtures: the devices every device test runs on (the CPU always, CUDA where present)."""

from __future__ import annotations

import pytest

from procgen_nb.device import available_devices

DEVICES = ["cpu"] + [d for d in available_devices() if d.startswith("cuda")][:1]


@pytest.fixture(params=DEVICES)
def device(request):
    """Each device of the machine: the CPU always, the first CUDA device where present."""
    return request.param


def pytest_report_header(config):
    return f"procgen_nb devices under test: {DEVICES}"
