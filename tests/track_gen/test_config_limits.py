"""Issue 21, items 4 and 6: a TrackGenConfig whose arrays would not fit is refused before
anything is allocated, and ``seed + e`` past 2^32 - 1 is refused naming the first env."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from procgen_nb.errors import ParamsError
from procgen_nb.track_gen import TrackGenConfig
from procgen_nb.track_gen import config as config_module


def test_seed_plus_env_past_32_bits_is_refused_naming_the_first_env():
    with pytest.raises(ParamsError, match=r"seed=4294967294 with num_envs=8: env 2 would"):
        TrackGenConfig(seed=2**32 - 2, num_envs=8)
    # the last env exactly at 2^32 - 1 is fine, and its seed is the 32-bit value
    cfg = TrackGenConfig(seed=2**32 - 8, num_envs=8)
    assert cfg.env_seed_values()[-1] == -1
    with pytest.raises(ParamsError, match=r"env 1 would have the seed 4294967296"):
        TrackGenConfig(seed=2**32 - 1, num_envs=2)
    # explicit env_seeds are each checked on their own
    TrackGenConfig(seed=2**32 - 1, num_envs=2, env_seeds=[2**32 - 1, 0])


def test_a_config_past_the_memory_limit_is_refused_naming_the_sizes(monkeypatch):
    monkeypatch.setattr(config_module, "memory_limit", lambda: (6 << 30, "a test limit"))
    with pytest.raises(ParamsError) as err:
        TrackGenConfig(num_envs=2**24, num_points=64)
    msg = str(err.value)
    assert "num_envs=16777216 x num_points=64" in msg
    assert "6442450944 bytes, a test limit" in msg
    assert "the track alone 8589934592 bytes" in msg
    # just under the limit passes (a bound of 32 bytes a point)
    TrackGenConfig(num_envs=(6 << 30) // (32 * 64), num_points=64)
    # a CUDA device's memory is not the host's
    TrackGenConfig(num_envs=2**24, num_points=64, device="cuda:0")


def test_the_limit_reads_rlimit_as_in_a_child():
    script = textwrap.dedent(
        """
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (6 << 30, resource.RLIM_INFINITY))
        from procgen_nb.errors import ParamsError
        from procgen_nb.track_gen import TrackGenConfig
        from procgen_nb.track_gen.config import memory_limit
        print(memory_limit())
        try:
            TrackGenConfig(num_envs=2**24, num_points=64)
        except ParamsError as e:
            print("refused", "RLIMIT_AS" in str(e) or "cgroup" in str(e))
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert "refused True" in out.stdout


def test_gate_config_seed_plus_env_is_refused_too():
    from procgen_nb.track_gen.gates import GateGenConfig

    with pytest.raises(ParamsError, match=r"GateGenConfig.seed: .*env 2 would have the seed"):
        GateGenConfig(seed=2**32 - 2, num_envs=8)
    assert GateGenConfig(seed=2**32 - 8, num_envs=8).env_seed_values()[-1] == -1
