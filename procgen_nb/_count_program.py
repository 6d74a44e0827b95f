"""Count arithmetic's program: the opcodes of a ``counts.Count`` and the kernel that folds one.

A Count compiles to a postfix program (``LEAF`` pushes a live count's word, ``CONST`` a
number, the others fold the top two). ``eval_count`` runs it on one thread in 64 bits,
saturating at +-2**40, and writes the result clamped to a u32 word.
"""

from __future__ import annotations

import warp as wp

#: the opcodes (``eval_count`` reads them as 0..6)
LEAF, CONST, ADD, SUB, MUL, MIN, MAX = range(7)
WORD_MAX = 2**32 - 1
#: intermediate values saturate at +-2**40: far past a u32 word, far inside 64 bits
_SAT = wp.constant(wp.int64(2**40))


@wp.kernel
def eval_count(
    prog: wp.array(dtype=wp.int32),
    operand: wp.array(dtype=wp.int64),
    leaves: wp.array(dtype=wp.uint32),
    stack: wp.array(dtype=wp.int64),
    out: wp.array(dtype=wp.uint32),
):
    sp = wp.int32(0)
    for pc in range(prog.shape[0]):
        op = prog[pc]
        if op == 0:
            stack[sp] = wp.int64(leaves[wp.int32(operand[pc])])
            sp = sp + 1
        elif op == 1:
            stack[sp] = operand[pc]
            sp = sp + 1
        else:
            x = stack[sp - 2]
            y = stack[sp - 1]
            r = x + y
            if op == 3:
                r = x - y
            elif op == 4:
                # saturate a product past the bound instead of wrapping 64 bits
                if wp.float64(x) * wp.float64(y) > wp.float64(_SAT):
                    r = wp.int64(_SAT)
                elif wp.float64(x) * wp.float64(y) < -wp.float64(_SAT):
                    r = -wp.int64(_SAT)
                else:
                    r = x * y
            elif op == 5:
                r = wp.min(x, y)
            elif op == 6:
                r = wp.max(x, y)
            sp = sp - 1
            stack[sp - 1] = wp.max(wp.min(r, wp.int64(_SAT)), -wp.int64(_SAT))
    v = stack[0]
    v = wp.max(v, wp.int64(0))
    v = wp.min(v, wp.int64(4294967295))
    out[0] = wp.uint32(v)
