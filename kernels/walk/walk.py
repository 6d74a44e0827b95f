"""walk: moves every point step by step along a step Field run as a program.

The Fields come from ``fieldc.walk_spec(step, opts)``: each is compiled to a small stack
program held in ``u`` (the numbers the chain carries; ``u[0..2]`` are the lengths of the
step, done and prelude programs, then two words per instruction), so every step Field
runs in this one build. ``cols`` holds the columns the Fields read (packed by the
columns binding), ``fieldc.bind_spec(spec)`` hands both over.

For each live point i: p starts at ``pos[i]`` (WALK_PRELUDE=field: at the prelude Field's
value there). Then up to ``steps`` times (WALK_DONE=field: stopping before a step where
the done Field is above 0): f is the step Field at p (WALK_STEP_HI=on: at the midpoint
``p + dt/2 * f``, a second-order step); WALK_STEP=add moves ``p += dt * f``, WALK_STEP=set
takes ``p = f``. ``out[i]`` is where the point ends and ``taken[i]`` the steps it took.
Past the live count: ``out`` is 0 and ``taken`` 0.

Every access is bounded: a word read past ``u``, a column row or slot past ``cols``, and an
operand popped from an empty stack read 0; a push past the 16-deep stack is dropped;
lengths, lane counts and lane numbers are clamped to what exists (NaN reads 0). So a
malformed program gives a defined (meaningless) answer, never a read outside a buffer.
"""

import warp as wp

stack16 = wp.types.matrix(shape=(16, 4), dtype=wp.float32)


@wp.func
def word(u: wp.array(dtype=wp.float32), k: wp.int32) -> wp.float32:
    """u[k], or 0 for a k outside u: a program never reads past its buffer."""
    if k >= 0 and k < u.shape[0]:
        return u[k]
    return 0.0


@wp.func
def whole(x: wp.float32, hi: wp.int32) -> wp.int32:
    """x as a whole number clamped to [0, hi] (NaN and negatives: 0)."""
    if x >= 0.0:
        if x >= float(hi):
            return hi
        return wp.int32(x)
    return 0


@wp.func
def run_program(
    u: wp.array(dtype=wp.float32),
    start: wp.int32,
    length: wp.int32,
    p: wp.vec2f,
    i: wp.int32,
    k: wp.int32,
    cols: wp.array2d(dtype=wp.float32),
) -> wp.vec4f:
    st = stack16()
    sp = wp.int32(0)
    pc = wp.int32(0)
    while pc < length:
        op = whole(word(u, start + 2 * pc), 255)
        arg = word(u, start + 2 * pc + 1)
        pc = pc + 1
        if op < 10:
            v = wp.vec4f(arg, arg, arg, arg)
            if op == 1:
                v = wp.vec4f(p[0], p[1], 0.0, 0.0)
            elif op == 2:
                code = whole(arg, 1 << 24)
                row = code // 8
                lanes = wp.min(code - row * 8, 4)
                v = wp.vec4f(0.0, 0.0, 0.0, 0.0)
                if i < cols.shape[1]:
                    if lanes == 1:
                        if row < cols.shape[0]:
                            x = cols[row, i]
                            v = wp.vec4f(x, x, x, x)
                    else:
                        for lane in range(lanes):
                            if row + lane < cols.shape[0]:
                                v[lane] = cols[row + lane, i]
            elif op == 3:
                v = wp.vec4f(float(i), float(i), float(i), float(i))
            elif op == 4:
                v = wp.vec4f(float(k), float(k), float(k), float(k))
            if sp < 16:
                st[sp] = v
                sp = sp + 1
        elif op < 30:
            while sp < 2:
                st[sp] = wp.vec4f(0.0, 0.0, 0.0, 0.0)
                sp = sp + 1
            a = st[sp - 2]
            b = st[sp - 1]
            sp = sp - 1
            r = a + b
            if op == 11:
                r = a - b
            elif op == 12:
                r = wp.cw_mul(a, b)
            elif op == 13:
                r = wp.cw_div(a, b)
            elif op == 14:
                r = wp.min(a, b)
            elif op == 15:
                r = wp.max(a, b)
            elif op == 16:
                c = wp.float32(0.0)
                if a[0] < b[0]:
                    c = 1.0
                r = wp.vec4f(c, c, c, c)
            elif op == 17:
                c = wp.float32(0.0)
                if a[0] > b[0]:
                    c = 1.0
                r = wp.vec4f(c, c, c, c)
            elif op == 18:
                lanes = whole(arg, 4)
                d = wp.float32(0.0)
                for lane in range(lanes):
                    d = d + a[lane] * b[lane]
                r = wp.vec4f(d, d, d, d)
            st[sp - 1] = r
        elif op < 50:
            if sp < 1:
                st[0] = wp.vec4f(0.0, 0.0, 0.0, 0.0)
                sp = 1
            a = st[sp - 1]
            r = -a
            if op == 31:
                r = wp.vec4f(wp.abs(a[0]), wp.abs(a[1]), wp.abs(a[2]), wp.abs(a[3]))
            elif op == 32:
                r = wp.vec4f(wp.floor(a[0]), wp.floor(a[1]), wp.floor(a[2]), wp.floor(a[3]))
            elif op == 33:
                x = wp.sqrt(a[0])
                r = wp.vec4f(x, x, x, x)
            elif op == 34:
                x = wp.sin(a[0])
                r = wp.vec4f(x, x, x, x)
            elif op == 35:
                x = wp.cos(a[0])
                r = wp.vec4f(x, x, x, x)
            elif op == 36 or op == 37:
                lanes = whole(arg, 4)
                d = wp.float32(0.0)
                for lane in range(lanes):
                    d = d + a[lane] * a[lane]
                n = wp.sqrt(d)
                r = wp.vec4f(n, n, n, n)
                if op == 37:
                    r = wp.vec4f(0.0, 0.0, 0.0, 0.0)
                    if n > 0.0:
                        for lane in range(lanes):
                            r[lane] = a[lane] / n
            elif op == 38:
                x = a[whole(arg, 3)]
                r = wp.vec4f(x, x, x, x)
            st[sp - 1] = r
        else:
            # op 50: a vector of the top arg scalars (lane 0 of each)
            lanes = wp.max(whole(arg, 4), 1)
            while sp < lanes:
                st[sp] = wp.vec4f(0.0, 0.0, 0.0, 0.0)
                sp = sp + 1
            r = wp.vec4f(0.0, 0.0, 0.0, 0.0)
            for lane in range(lanes):
                r[lane] = st[sp - lanes + lane][0]
            sp = sp - lanes + 1
            st[sp - 1] = r
    return st[0]


@wp.kernel
def walk(
    pos: wp.array(dtype=wp.vec2f),
    cols: wp.array2d(dtype=wp.float32),
    u: wp.array(dtype=wp.float32),
    out: wp.array(dtype=wp.vec2f),
    taken: wp.array(dtype=wp.int32),
    # @when COUNT device
    domain_count: wp.array(dtype=wp.uint32),
    # @end
    dt: float,
    steps: int,
):
    i = wp.tid()
    live = out.shape[0]
    # @when COUNT device
    live = wp.int32(wp.min(domain_count[0], wp.uint32(out.shape[0])))
    # @end
    if i >= live:
        out[i] = wp.vec2f(0.0, 0.0)
        taken[i] = 0
        return
    # a program's length is clamped to u's: a malformed u reads 0 past its end
    n_step = whole(word(u, 0), u.shape[0])
    n_done = whole(word(u, 1), u.shape[0])
    n_prelude = whole(word(u, 2), u.shape[0])
    at_step = 3
    at_done = at_step + 2 * n_step
    at_prelude = at_done + 2 * n_done
    p = pos[i]
    # @when WALK_PRELUDE field
    r0 = run_program(u, at_prelude, n_prelude, p, i, 0, cols)
    p = wp.vec2f(r0[0], r0[1])
    # @end
    k = wp.int32(0)
    while k < steps:
        # @when WALK_DONE field
        d = run_program(u, at_done, n_done, p, i, k, cols)
        if d[0] > 0.0:
            break
        # @end
        f = run_program(u, at_step, n_step, p, i, k, cols)
        # @when WALK_STEP_HI on
        mid = p + 0.5 * dt * wp.vec2f(f[0], f[1])
        f = run_program(u, at_step, n_step, mid, i, k, cols)
        # @end
        # @when WALK_STEP add
        p = p + dt * wp.vec2f(f[0], f[1])
        # @end
        # @when WALK_STEP set
        p = wp.vec2f(f[0], f[1])
        # @end
        k = k + 1
    out[i] = p
    taken[i] = k
