"""Kernels of a call's head and tail: each env's base seed, the active mask, the valid count.

An env's base seed hashes its seed, the epoch and (for a regenerated env) the attempt.
"""

from __future__ import annotations

import warp as wp

from .funcs import hash_u32

# portable bytes: no host-specific ISA flags, no FMA contraction (see ops.funcs)
wp.set_module_options({"cpu_compiler_flags": "-ffp-contract=off"})

_GOLDEN = wp.constant(wp.uint32(0x9E3779B9))
_ATTEMPT = wp.constant(wp.uint32(0x85EBCA6B))


@wp.kernel
def _seeds_k(
    env_seed: wp.array(dtype=wp.int32),
    epoch: wp.array(dtype=wp.int32),
    attempt: wp.array(dtype=wp.int32),
    active: wp.array(dtype=wp.int32),
    seeds: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    if active[e] == 0:
        return
    k = hash_u32(wp.uint32(env_seed[e]))
    k = hash_u32(k ^ (wp.uint32(epoch[0]) * _GOLDEN + wp.uint32(0x3C6EF372)))
    if attempt[e] > 0:
        k = hash_u32(k ^ (wp.uint32(attempt[e]) * _ATTEMPT))
    seeds[e] = wp.int32(k)


@wp.kernel
def _all_active_k(active: wp.array(dtype=wp.int32), attempt: wp.array(dtype=wp.int32)):
    e = wp.tid()
    active[e] = 1
    attempt[e] = 0


@wp.kernel
def _select_k(
    valid: wp.array(dtype=wp.int32),
    user_mask: wp.array(dtype=wp.int32),
    mode: wp.array(dtype=wp.int32),
    active: wp.array(dtype=wp.int32),
    attempt: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    a = wp.int32(0)
    if mode[0] == 0:
        if valid[e] == 0:
            a = wp.int32(1)
    else:
        if user_mask[e] != 0:
            a = wp.int32(1)
    active[e] = a
    attempt[e] = attempt[e] + a


@wp.kernel
def _count_k(valid: wp.array(dtype=wp.int32), n: int, out: wp.array(dtype=wp.int32)):
    s = wp.int32(0)
    for e in range(n):
        if valid[e] != 0:
            s += 1
    out[0] = s
