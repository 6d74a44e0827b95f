"""Shared fixtures: the devices every device test runs on (the CPU always, CUDA where present)."""

from __future__ import annotations

import os

import pytest
from hypothesis import settings

from procgen_nb.device import available_devices

# CI (``CI`` set, as ``.ci/run``'s runners set it) draws the same examples every run: a
# clean clone's single run passes or fails on the code, not on the draw. Anywhere else each
# run draws new ones, which is where a rare failure shows; pin it with ``@example``.
settings.register_profile("ci", derandomize=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

DEVICES = ["cpu"] + [d for d in available_devices() if d.startswith("cuda")][:1]


@pytest.fixture(params=DEVICES)
def device(request):
    """Each device of the machine: the CPU always, the first CUDA device where present."""
    return request.param


def pytest_report_header(config):
    profile = "ci (derandomized)" if os.environ.get("CI") else "default (random)"
    return f"procgen_nb devices under test: {DEVICES}; hypothesis profile: {profile}"
