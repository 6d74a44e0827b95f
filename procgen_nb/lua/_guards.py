"""The sandbox's guards on standard functions whose C loops the count hook cannot see.

A count hook runs between Lua instructions, never inside one C function, so a standard
function that loops in C over a count the script chooses could run past the ceiling.
``GUARDS`` runs once after ``SETUP`` (with the real standard library in reach) and
replaces those functions in the sandbox's tables:

- ``string.rep``: an empty piece answers "" at once; a short piece repeated many times
  is copied as a unit of about 4 KB.
- ``string.find``, ``match``, ``gmatch``, ``gsub``: the steps a native match can take are
  bounded from the pattern and the subject (captures, quantified items, ``%b`` and back
  references, and the runs of each quantified class in the subject); a match whose bound
  passes ``pattern_steps`` runs in Lua instead (``_lmatch``: the same answers, slower,
  and the ceiling stops it). A plain search runs natively when short, in windows when
  long, and as a linear (KMP) search for a long needle.
- ``string.pack``, ``packsize``, ``unpack``: formats of at most ``pack_format`` bytes.
- ``table.move``, ``concat``, ``insert``, ``remove``: past ``chunk`` elements they work
  in chunks, checking the ceiling between chunks; ``table.sort`` past ``sort`` elements
  compares in Lua (where the hook runs).
- ``load`` (in ``SETUP``) parses a long chunk a piece at a time, and
  ``collectgarbage("collect")`` runs a step at a time.
"""

from __future__ import annotations

#: Limits the guards hold (see the module docstring).
LIMITS = {
    "pattern_steps": 100_000_000,
    "chunk": 1 << 15,
    "sort": 1 << 18,
    "pack_format": 4096,
}

GUARDS = r"""
local env, poll, limits, lmatch, afford = ...
local type, select, tostring, error, math_type = type, select, tostring, error, math.type
local s_find, s_match, s_gmatch, s_gsub = string.find, string.match, string.gmatch, string.gsub
local s_rep, s_sub, s_byte, s_format = string.rep, string.sub, string.byte, string.format
local s_pack, s_packsize, s_unpack = string.pack, string.packsize, string.unpack
local t_move, t_sort, t_concat, t_insert, t_remove =
      table.move, table.sort, table.concat, table.insert, table.remove
local min, max, floor, maxinteger = math.min, math.max, math.floor, math.maxinteger

local BUDGET = limits.pattern_steps      -- match steps one native pattern call may take
local CHUNK = limits.chunk               -- elements one native table call may touch
local SORT = limits.sort                 -- the longest array sorted natively
local FORMAT = limits.pack_format        -- longest string.pack format

-- a float with an integral value as the integer it stands for (as the C functions take it)
local tointeger = math.tointeger
local function int(x)
  if math_type(x) == "float" then return tointeger(x) or x end
  return x
end

local function fail(what, detail)
  error(what .. ": " .. detail, 3)
end

-- string.rep: an empty piece answers "" at once (the C loop would run n times), and a
-- short piece repeated many times is copied as a unit of about 4 KB
local REP_UNIT = 4096
local REP_NATIVE = 1 << 24  -- the longest result string.rep makes without a time check
local REP_NS = 3.0          -- CPU ns a byte of a long result costs (1.3 to 2.7 measured)
env.string.rep = function(s, n, sep)
  if type(n) == "string" then n = tonumber(n) or n end
  n = int(n)
  if math_type(n) ~= "integer" or n <= 0 then return s_rep(s, 0, sep) and s_rep(s, n, sep) end
  local base = s_rep(s, 1)
  local gap = sep == nil and "" or s_rep(sep, 1)
  local l = #base + #gap
  if l == 0 then return "" end
  if n * 1.0 * l > 2.0 ^ 40 then fail("string.rep", "resulting string too large") end
  if n * l <= REP_NATIVE then
    if n <= REP_UNIT or l >= REP_UNIT then return s_rep(base, n, gap) end
    local piece = gap .. base               -- s (sep s)^(n - 1)
    local k = (REP_UNIT + l - 1) // l
    local unit = s_rep(piece, k)
    local q, r = (n - 1) // k, (n - 1) % k
    return base .. s_rep(unit, q) .. s_rep(piece, r)
  end
  -- a long result is one C call that no hook interrupts: made only when it would end
  -- within the call's allowance past its ceiling (at REP_NS ns a byte), else the call
  -- stops at its ceiling now
  afford(n * 1.0 * l * REP_NS * 1e-9)
  -- one native call, no concatenation after it: s_rep(A, q, B) with A = s (g s)^(a-1) and
  -- B = g (s g)^b is s (g s)^(a - 1 + (q - 1)(a + b)), so n = a + (q - 1) k for k = a + b
  local k = (REP_UNIT + l - 1) // l
  local q1 = (n - 1) // k
  local a = n - q1 * k
  local A = s_rep(base, a, gap)
  local B = gap .. s_rep(base .. gap, k - a)
  return s_rep(A, q1 + 1, B)
end

-- patterns: the cost of a native match is estimated from the pattern and the subject
-- (an upper bound on the matcher's steps); a match past BUDGET runs in Lua (lmatch), so
-- no native call runs long without a check of the ceiling
local caches, cached = {a = {}, g = {}}, 0
local SPECIALS = "[%^%$%*%+%?%.%(%[%%%-]"

local function class_end(p, i, n)
  local c = s_sub(p, i, i)
  i = i + 1
  if c == "%" then
    if i > n then return nil end
    return i + 1
  elseif c == "[" then
    if s_sub(p, i, i) == "^" then i = i + 1 end
    repeat
      if i > n then return nil end
      local d = s_sub(p, i, i)
      i = i + 1
      if d == "%" then i = i + 1 end
    until s_sub(p, i, i) == "]"
    return i + 1
  end
  return i
end

-- parses a pattern: quantified single-char items (class text, quantifier, final or not),
-- the number of items, of %b and of back references. A malformed pattern is parsed up to
-- its fault: the matcher raises there, so what comes before bounds its work
local function parse(p, anchor_ok)
  local cache = anchor_ok and caches.a or caches.g
  local info = cache[p]
  if info then return info end
  local n, i = #p, 1
  -- width: the longest character set's text (the matcher scans a set byte by byte, so one
  -- step of a set item costs up to its length)
  info = {q = {}, items = 1, b = {}, nback = 0, anchored = false, first = nil, width = 1}
  if anchor_ok and s_sub(p, 1, 1) == "^" then
    info.anchored = true
    i = 2
  end
  local lastq
  local function item()
    info.items = info.items + 1
    if lastq then lastq.final = false; lastq = nil end
  end
  while i <= n do
    local c = s_sub(p, i, i)
    if c == "(" or c == ")" then
      info.items = info.items + 1
      i = i + 1
    elseif c == "$" and i == n then
      item()
      i = i + 1
    elseif c == "%" and s_sub(p, i + 1, i + 1) == "b" then
      item()
      if i + 3 > n then break end
      info.b[#info.b + 1] = {s_sub(p, i + 2, i + 2), s_sub(p, i + 3, i + 3)}
      info.first = info.first or false
      i = i + 4
    elseif c == "%" and s_sub(p, i + 1, i + 1) == "f" then
      item()
      if s_sub(p, i + 2, i + 2) ~= "[" then break end
      local e = class_end(p, i + 2, n)
      if e == nil then break end
      -- a frontier tests the set at two characters
      info.width = max(info.width, 2 * (e - i - 2))
      i = e
    elseif c == "%" and s_find(s_sub(p, i + 1, i + 1), "^%d") then
      item()
      info.nback = info.nback + 1
      info.first = info.first or false
      i = i + 2
    else
      local e = class_end(p, i, n)
      item()
      if e == nil then break end
      info.width = max(info.width, e - i)
      local cls, qc = s_sub(p, i, e - 1), s_sub(p, e, e)
      if qc == "*" or qc == "+" or qc == "-" or qc == "?" then
        lastq = {cls = cls, q = qc, final = true}
        info.q[#info.q + 1] = lastq
        e = e + 1
      end
      if info.first == nil then info.first = lastq or {cls = cls, q = ""} end
      i = e
    end
  end
  if cached >= 512 then
    caches.a, caches.g, cached = {}, {}, 0
    cache = anchor_ok and caches.a or caches.g
  end
  cache[p] = info
  cached = cached + 1
  return info
end

-- runs of characters of class `cls` in s: the longest, the sum over starting points of
-- (the run from there + 1), and how many characters are in runs (a Lua loop: hooked)
local function runs(s, cls, memo)
  local got = memo[cls]
  if got then return got[1], got[2], got[3] end
  local n = #s
  local best, total, covered = 0, 0, 0
  if cls == "." or #cls > 32 then  -- a long set is not scanned natively here (its cost)
    best, total, covered = n, (n + 1) * (n + 2) / 2, n
  else
    for a, b in s_gmatch(s, "()" .. cls .. "+()") do
      local len = b - a
      if len > best then best = len end
      total = total + len * (len + 3) / 2
      covered = covered + len
    end
    total = total + (n + 1 - covered)
  end
  memo[cls] = {best, total, covered}
  return best, total, covered
end

-- the longest stretch one %bxy attempt scans in s: from an x to the y that balances it
-- (or to the end), over every x (a Lua loop: hooked)
local function balance_span(s, x, y, memo)
  local key = "%b" .. x .. y
  if memo[key] then return memo[key] end
  local n, best = #s, 0
  local esc = function(c) return s_find(c, "^%w") and c or "%" .. c end
  if x == y then
    -- an attempt at each x scans to the next one
    local prev
    for pos in s_gmatch(s, "()" .. esc(x)) do
      if prev and pos - prev + 1 > best then best = pos - prev + 1 end
      prev = pos
    end
    if prev and n - prev + 1 > best then best = n - prev + 1 end
  else
    local stack, top = {}, 0
    for pos, c in s_gmatch(s, "()([" .. esc(x) .. esc(y) .. "])") do
      if c == y then
        if top > 0 then
          if pos - stack[top] + 1 > best then best = pos - stack[top] + 1 end
          top = top - 1
        end
      else
        top = top + 1
        stack[top] = pos
      end
    end
    for j = 1, top do
      if n - stack[j] + 1 > best then best = n - stack[j] + 1 end
    end
  end
  memo[key] = best
  return best
end

local function binom(a, k)
  local b = 1.0
  for j = 1, k do b = b * (a - k + j) / j end
  return b
end

-- an upper bound on the steps of a match of `info` over s (every start, or one)
local function estimate(s, info, refine, n)
  n = n or #s
  local memo = {}
  local k, ranges = 0, 1.0
  for _, q in ipairs(info.q) do
    if not q.final then
      k = k + 1
      local r = n
      if refine then r = runs(s, q.cls, memo) end
      if q.q == "?" then r = min(r, 1) end
      ranges = ranges * (r + 1)
    end
  end
  local per = info.items + n * info.nback
  for _, b in ipairs(info.b) do
    per = per + (refine and balance_span(s, b[1], b[2], memo) or n)
  end
  local width = info.width
  if info.anchored then
    return (min(ranges, binom(n + k, k)) * per + n) * width
  end
  local first = info.first
  local starts = (n + 1) * ranges
  if refine and first and (first.q == "" or first.q == "+") then
    -- a start that does not match the first item fails at once
    local r1, sum, covered = runs(s, first.cls, memo)
    if first.q == "+" and not first.final then
      starts = sum * ranges / (min(r1, n) + 1)
    else
      starts = (n + 1) + covered * ranges
    end
  end
  return (min(starts, binom(n + k + 1, k + 1)) * per + n) * width
end

-- the longest subject the coarse bound lets a pattern match natively (per pattern, cached)
local function safe_length(info)
  if estimate(nil, info, false, 0) > BUDGET then return -1 end
  local lo, hi = 0, 1
  while hi < 2 ^ 40 and estimate(nil, info, false, hi) <= BUDGET do lo, hi = hi, hi * 2 end
  while hi - lo > 1 do
    local mid = (lo + hi) // 2
    if estimate(nil, info, false, mid) <= BUDGET then lo = mid else hi = mid end
  end
  return lo
end

-- whether a native match of p over s could take more than BUDGET steps
local function costly(s, p, anchor_ok)
  local info = parse(p, anchor_ok)
  local safe = info.safe
  if safe == nil then
    safe = safe_length(info)
    info.safe = safe
  end
  if #s <= safe then return false end
  return estimate(s, info, true) > BUDGET
end

-- plain search: native when short, else in windows that each cost at most BUDGET, or a
-- linear search (KMP) for a long needle
local function kmp(s, p, init)
  local m, n = #p, #s
  local fail_at = {[1] = 0}
  local k = 0
  for i = 2, m do
    local c = s_byte(p, i)
    while k > 0 and s_byte(p, k + 1) ~= c do k = fail_at[k] end
    if s_byte(p, k + 1) == c then k = k + 1 end
    fail_at[i] = k
  end
  k = 0
  for i = init, n do
    local c = s_byte(s, i)
    while k > 0 and s_byte(p, k + 1) ~= c do k = fail_at[k] end
    if s_byte(p, k + 1) == c then k = k + 1 end
    if k == m then return i - m + 1, i end
  end
  return nil
end

local function plain_find(s, p, init)
  local n, m = #s, #p
  if init < 0 then init = max(n + init + 1, 1) elseif init == 0 then init = 1 end
  if init > n + 1 then return nil end
  if m == 0 then return init, init - 1 end
  if (n - init + 1) * m <= BUDGET then return s_find(s, p, init, true) end
  if m > 4096 then return kmp(s, p, init) end
  local w = max(1, BUDGET // m)
  local pos = init
  while pos + m - 1 <= n do
    local a, b = s_find(s_sub(s, pos, pos + w + m - 2), p, 1, true)
    if a then return pos + a - 1, pos + b - 1 end
    pos = pos + w
    poll()
  end
  return nil
end

local function strings(s, p, n)
  return type(s) == "string" and type(p) == "string" and (n == nil or math_type(n) == "integer")
end
env.string.find = function(s, p, init, plain)
  init = int(init)
  if strings(s, p, init) then
    if plain or not s_find(p, SPECIALS) then return plain_find(s, p, init or 1) end
    if costly(s, p, true) then return lmatch.find(s, p, init) end
  end
  return s_find(s, p, init, plain)
end
env.string.match = function(s, p, init)
  init = int(init)
  if strings(s, p, init) and costly(s, p, true) then return lmatch.match(s, p, init) end
  return s_match(s, p, init)
end
env.string.gmatch = function(s, p, init)
  init = int(init)
  if strings(s, p, init) and costly(s, p, false) then return lmatch.gmatch(s, p, init) end
  return s_gmatch(s, p, init)
end
env.string.gsub = function(s, p, repl, n)
  n = int(n)
  if strings(s, p, n) and costly(s, p, true) then return lmatch.gsub(s, p, repl, n) end
  return s_gsub(s, p, repl, n)
end

-- string.format: "%q" of a long string runs a C loop over every byte; past QUOTE bytes
-- the string is quoted a piece at a time (the ceiling checked between pieces). A piece
-- never ends on a control byte followed by a digit (the one place where a byte's quoted
-- form depends on the next), so the pieces' forms join into the whole one
local QUOTE = 1 << 16
local function quote_long(v)
  local n, at, parts = #v, 1, {'"'}
  while at <= n do
    local b = min(at + QUOTE - 1, n)
    local c, d = s_byte(v, b, b + 1)
    if d and d >= 48 and d <= 57 and (c < 32 or c == 127) then b = b + 1 end
    local q = s_format("%q", s_sub(v, at, b))
    parts[#parts + 1] = s_sub(q, 2, -2)
    at = b + 1
    poll()
  end
  parts[#parts + 1] = '"'
  return t_concat(parts)
end
local function long_quoted(fmt, args)
  local out, k, pos = {}, 0, 1
  while true do
    local a, b = s_find(fmt, "%%[-+ #0]*%d*%.?%d*.", pos)
    if not a then break end
    out[#out + 1] = s_sub(fmt, pos, a - 1)
    local spec = s_sub(fmt, a, b)
    if spec == "%%" then
      out[#out + 1] = "%"
    else
      k = k + 1
      local v = args[k]
      if spec == "%q" and type(v) == "string" and #v > QUOTE then
        out[#out + 1] = quote_long(v)
      else
        out[#out + 1] = s_format(spec, v)
      end
    end
    pos = b + 1
  end
  out[#out + 1] = s_sub(fmt, pos)
  return t_concat(out)
end
local pack = table.pack
env.string.format = function(fmt, ...)
  if type(fmt) == "string" and s_find(fmt, "%q", 1, true) then
    local args = pack(...)
    for i = 1, args.n do
      local v = args[i]
      if type(v) == "string" and #v > QUOTE then return long_quoted(fmt, args) end
    end
  end
  return s_format(fmt, ...)
end

-- string.pack formats are short (each item of a long one is a step of a C loop)
local function check_format(what, fmt)
  if type(fmt) == "string" and #fmt > FORMAT then
    fail(what, s_format("expected a format of at most %d bytes, got %d bytes", FORMAT, #fmt))
  end
end
env.string.pack = function(fmt, ...)
  check_format("string.pack", fmt)
  return s_pack(fmt, ...)
end
env.string.packsize = function(fmt)
  check_format("string.packsize", fmt)
  return s_packsize(fmt)
end
env.string.unpack = function(fmt, ...)
  check_format("string.unpack", fmt)
  return s_unpack(fmt, ...)
end

-- table functions whose C loop runs over a count the script chooses (through __len, or
-- the arguments) work in chunks of CHUNK elements, checking the ceiling between chunks
env.table.move = function(a1, f, e, t, a2)
  f, e, t = int(f), int(e), int(t)
  if math_type(f) == "integer" and math_type(e) == "integer" and math_type(t) == "integer"
     and e >= f and (f > 0 or e < maxinteger + f) and e - f >= CHUNK then
    t_move(a1, 1, 0, 1, a2)               -- checks the tables as the real one does
    if t > maxinteger - (e - f) then return t_move(a1, f, e, t, a2) end
    local dst = a2 == nil and a1 or a2
    if t > e or t <= f or dst ~= a1 then
      local i = f
      while true do
        local hi = (e - i >= CHUNK) and (i + CHUNK - 1) or e
        t_move(a1, i, hi, t + (i - f), dst)
        poll()
        if hi == e then break end
        i = hi + 1
      end
    else
      local i = e
      while true do
        local lo = (i - f >= CHUNK) and (i - CHUNK + 1) or f
        t_move(a1, lo, i, t + (lo - f), dst)
        poll()
        if lo == f then break end
        i = lo - 1
      end
    end
    return dst
  end
  return t_move(a1, f, e, t, a2)
end

-- table.sort: natively only when every comparison is short: no comparator and numbers
-- only, or strings whose comparisons together touch at most SORT_BYTES bytes (one
-- comparison of two equal 1 MB strings is a C loop of 1 MB); otherwise the comparisons
-- run in Lua (each one an instruction the hook and the watchdog see)
local SORT_BYTES = 1 << 26
local function less(a, b) return a < b end
local function cheap_sort(t, n)
  if n < 2 then return true end
  local numbers, longest = true, 0
  for i = 1, n do
    local v = t[i]
    local tv = type(v)
    if tv == "string" then
      numbers = false
      if #v > longest then longest = #v end
    elseif tv ~= "number" then
      return false
    end
  end
  if numbers then return true end
  local depth = 1
  while (1 << depth) < n do depth = depth + 1 end
  return n * 1.0 * (depth + 1) * 2 * longest <= SORT_BYTES
end
env.table.sort = function(t, comp)
  if type(t) == "table" then
    local n = #t
    if math_type(n) == "integer" then
      -- the comparisons run in Lua, where the hook sees them
      if comp == nil and (n > SORT or not cheap_sort(t, n)) then return t_sort(t, less) end
      if comp ~= nil and n > SORT then
        local c = comp
        return t_sort(t, function(a, b) return c(a, b) end)
      end
    end
  end
  return t_sort(t, comp)
end

env.table.concat = function(t, sep, i, j)
  i, j = int(i), int(j)
  if type(t) == "table" and (i == nil or math_type(i) == "integer")
     and (j == nil or math_type(j) == "integer") then
    local first = i or 1
    local last = j
    if last == nil then last = #t end
    if math_type(last) == "integer" and last >= first and last - first >= CHUNK
       and (first > 0 or last < maxinteger + first) then
      local parts, i0 = {}, first
      while true do
        local hi = (last - i0 >= CHUNK) and (i0 + CHUNK - 1) or last
        parts[#parts + 1] = t_concat(t, sep, i0, hi)
        poll()
        if hi == last then break end
        i0 = hi + 1
      end
      return t_concat(parts, sep)
    end
  end
  return t_concat(t, sep, i, j)
end

env.table.insert = function(t, ...)
  if select("#", ...) == 2 and type(t) == "table" then
    local pos, v = ...
    pos = int(pos)
    local e = #t
    if math_type(e) == "integer" and math_type(pos) == "integer" and pos >= 1
       and e < maxinteger and pos <= e + 1 and e + 1 - pos > CHUNK then
      for i = e + 1, pos + 1, -1 do t[i] = t[i - 1] end
      t[pos] = v
      return
    end
  end
  return t_insert(t, ...)
end

env.table.remove = function(t, pos)
  pos = int(pos)
  if type(t) == "table" then
    local size = #t
    if math_type(size) == "integer" and math_type(pos or 1) == "integer" then
      local p = pos or size
      if p >= 1 and p <= size and size - p > CHUNK then
        local v = t[p]
        for i = p, size - 1 do t[i] = t[i + 1] end
        t[size] = nil
        return v
      end
    end
  end
  if pos == nil then return t_remove(t) end
  return t_remove(t, pos)
end
"""
