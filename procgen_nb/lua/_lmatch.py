"""Lua patterns matched in Lua: the sandbox's fallback for a match too long to run natively.

``MATCHER`` is a port of the matcher of Lua 5.4's ``lstrlib.c`` (``match``,
``max_expand``, ``min_expand``, captures, ``%b``, ``%f``, back references, and the
``find``/``match``/``gmatch``/``gsub`` drivers) written in Lua, so the count hook runs
inside it and the ceiling stops it. The guards (``_guards``) call it when the bound on a
native match's steps passes the budget; it answers what the native functions answer,
about 30 to 50 times slower. Character classes (``%a``, ``%s``, ...) are tabulated from
the native matcher, so they agree with it.
"""

from __future__ import annotations

MATCHER = r"""
local s_find, s_sub, s_byte, s_char, s_format = string.find, string.sub, string.byte,
                                               string.char, string.format
local type, tostring, error, select, math_type = type, tostring, error, select, math.type
local concat, unpack = table.concat, table.unpack
local CAP_UNFINISHED, CAP_POSITION, MAXCCALLS, MAXCAPTURES = -1, -2, 200, 32
local LONG_SET = 32  -- a class text longer than this is never scanned natively

local CLASS = {}
for _, letter in ipairs({"a", "c", "d", "g", "l", "p", "s", "u", "w", "x", "z"}) do
  local t = {}
  for c = 0, 255 do t[c] = s_find(s_char(c), "^%" .. letter) ~= nil end
  CLASS[s_byte(letter)] = t
end

local function match_class(c, cl)
  local upper = cl >= 65 and cl <= 90
  local t = CLASS[upper and cl + 32 or cl]
  if t == nil then return cl == c end
  if upper then return not t[c] end
  return t[c]
end

local M = {}
M.__index = M

local function new(S, P, p0)
  return setmetatable({S = S, P = P, src_end = #S + 1, p_end = #P + 1, level = 0,
                       depth = MAXCCALLS, init = {}, len = {}, p0 = p0 or 1, runs = {}}, M)
end

function M:class_end(p)
  local P = self.P
  local c = s_byte(P, p)
  p = p + 1
  if c == 37 then
    if p >= self.p_end then error("malformed pattern (ends with '%')", 0) end
    return p + 1
  elseif c == 91 then
    if s_byte(P, p) == 94 then p = p + 1 end
    repeat
      if p >= self.p_end then error("malformed pattern (missing ']')", 0) end
      local cc = s_byte(P, p)
      p = p + 1
      if cc == 37 and p < self.p_end then p = p + 1 end
    until s_byte(P, p) == 93
    return p + 1
  end
  return p
end

function M:bracket(c, p, ec)
  local P, sig = self.P, true
  if s_byte(P, p + 1) == 94 then sig = false; p = p + 1 end
  p = p + 1
  while p < ec do
    local pc = s_byte(P, p)
    if pc == 37 then
      p = p + 1
      if match_class(c, s_byte(P, p)) then return sig end
    elseif s_byte(P, p + 1) == 45 and p + 2 < ec then
      p = p + 2
      if s_byte(P, p - 2) <= c and c <= s_byte(P, p) then return sig end
    elseif pc == c then
      return sig
    end
    p = p + 1
  end
  return not sig
end

function M:single(s, p, ep)
  if s >= self.src_end then return false end
  local c, pc = s_byte(self.S, s), s_byte(self.P, p)
  if pc == 46 then return true
  elseif pc == 37 then return match_class(c, s_byte(self.P, p + 1))
  elseif pc == 91 then return self:bracket(c, p, ep - 1)
  end
  return pc == c
end

function M:balance(s, p)
  if p >= self.p_end - 1 then error("malformed pattern (missing arguments to '%b')", 0) end
  local S, P = self.S, self.P
  if s >= self.src_end or s_byte(S, s) ~= s_byte(P, p) then return nil end
  local b, e, cont = s_byte(P, p), s_byte(P, p + 1), 1
  s = s + 1
  while s < self.src_end do
    local c = s_byte(S, s)
    if c == e then
      cont = cont - 1
      if cont == 0 then return s + 1 end
    elseif c == b then
      cont = cont + 1
    end
    s = s + 1
  end
  return nil
end

-- the byte of a plain literal item at q (no quantifier that allows it to be absent), or nil
local PLAIN = {}
for c = 0, 255 do PLAIN[c] = true end
for c in ("^$*+?.()[%-"):gmatch(".") do PLAIN[s_byte(c)] = false end
function M:literal_at(q)
  -- captures take nothing: skip those that open or close without an error
  local P, lv, un = self.P, self.level, 0
  for l = 1, lv do
    if self.len[l] == CAP_UNFINISHED then un = un + 1 end
  end
  while true do
    local c = s_byte(P, q)
    if c == 40 then
      if lv >= MAXCAPTURES then return nil end
      lv = lv + 1
      if s_byte(P, q + 1) == 41 then q = q + 2 else un = un + 1; q = q + 1 end
    elseif c == 41 then
      if un == 0 then return nil end
      un = un - 1
      q = q + 1
    else
      break
    end
  end
  if q >= self.p_end then return nil end
  local c, nq = s_byte(P, q), s_byte(P, q + 1)
  if PLAIN[c] and nq ~= 42 and nq ~= 63 and nq ~= 45 then return c end
  return nil
end

function M:max_expand(s, p, ep)
  -- the run of the class from s, counted natively (a single class, greedy, at the end of
  -- its pattern: linear)
  local runs = self.runs
  local rp = runs[p]
  if rp == nil then
    -- a long set is matched in Lua (natively, each byte would scan the whole set)
    rp = ep - p <= LONG_SET and "^" .. s_sub(self.P, p, ep - 1) .. "*" or false
    runs[p] = rp
  end
  local i = 0
  if rp then
    local _, last = s_find(self.S, rp, s)
    i = (last or s - 1) - s + 1
  else
    while self:single(s + i, p, ep) do i = i + 1 end
  end
  local lit, S = self:literal_at(ep + 1), self.S
  while i >= 0 do
    if lit == nil or s_byte(S, s + i) == lit then  -- else the rest fails at once
      local res = self:match(s + i, ep + 1)
      if res then return res end
    end
    i = i - 1
  end
  return nil
end

function M:min_expand(s, p, ep)
  local lit = self:literal_at(ep + 1)
  if lit and s_byte(self.P, p) == 46 then
    -- '.-' then a literal: the rest can only start where that literal is
    local c = s_char(lit)
    while true do
      local t = s_find(self.S, c, s, true)
      if t == nil then return nil end
      local res = self:match(t, ep + 1)
      if res then return res end
      s = t + 1
    end
  end
  while true do
    local res = self:match(s, ep + 1)
    if res then return res
    elseif self:single(s, p, ep) then s = s + 1
    else return nil end
  end
end

function M:start_capture(s, p, what)
  local level = self.level + 1
  if level > MAXCAPTURES then error("too many captures", 0) end
  self.init[level], self.len[level], self.level = s, what, level
  local res = self:match(s, p)
  if res == nil then self.level = self.level - 1 end
  return res
end

function M:end_capture(s, p)
  local l
  for level = self.level, 1, -1 do
    if self.len[level] == CAP_UNFINISHED then l = level break end
  end
  if l == nil then error("invalid pattern capture", 0) end
  self.len[l] = s - self.init[l]
  local res = self:match(s, p)
  if res == nil then self.len[l] = CAP_UNFINISHED end
  return res
end

function M:match_capture(s, c)
  local l = c - 48
  if l < 1 or l > self.level or self.len[l] == CAP_UNFINISHED then
    error(s_format("invalid capture index %%%d", l), 0)
  end
  local len = self.len[l]
  if len >= 0 and self.src_end - s >= len
     and s_sub(self.S, self.init[l], self.init[l] + len - 1) == s_sub(self.S, s, s + len - 1) then
    return s + len
  end
  return nil
end

function M:match(s, p)
  self.depth = self.depth - 1
  if self.depth < 0 then error("pattern too complex", 0) end
  local P = self.P
  while p ~= self.p_end do
    local pc = s_byte(P, p)
    if pc == 40 then                                   -- (
      if s_byte(P, p + 1) == 41 then s = self:start_capture(s, p + 2, CAP_POSITION)
      else s = self:start_capture(s, p + 1, CAP_UNFINISHED) end
      break
    elseif pc == 41 then                               -- )
      s = self:end_capture(s, p + 1)
      break
    elseif pc == 36 and p + 1 == self.p_end then       -- $ at the end
      if s ~= self.src_end then s = nil end
      break
    elseif pc == 37 and s_byte(P, p + 1) == 98 then    -- %b
      s = self:balance(s, p + 2)
      if s == nil then break end
      p = p + 4
    elseif pc == 37 and s_byte(P, p + 1) == 102 then   -- %f
      p = p + 2
      if s_byte(P, p) ~= 91 then error("missing '[' after '%f' in pattern", 0) end
      local ep = self:class_end(p)
      local prev = s == 1 and 0 or s_byte(self.S, s - 1)
      local cur = s_byte(self.S, s) or 0
      if not self:bracket(prev, p, ep - 1) and self:bracket(cur, p, ep - 1) then
        p = ep
      else
        s = nil
        break
      end
    elseif pc == 37 and (s_byte(P, p + 1) or 0) >= 48 and s_byte(P, p + 1) <= 57 then
      s = self:match_capture(s, s_byte(P, p + 1))      -- %0-%9
      if s == nil then break end
      p = p + 2
    else
      local ep = self:class_end(p)
      local epc = s_byte(P, ep)
      if not self:single(s, p, ep) then
        if epc == 42 or epc == 63 or epc == 45 then     -- * ? -
          p = ep + 1
        else
          s = nil
          break
        end
      elseif epc == 63 then                              -- ?
        local res = self:match(s + 1, ep + 1)
        if res then s = res break end
        p = ep + 1
      elseif epc == 43 then s = self:max_expand(s + 1, p, ep) break   -- +
      elseif epc == 42 then s = self:max_expand(s, p, ep) break       -- *
      elseif epc == 45 then s = self:min_expand(s, p, ep) break       -- -
      else
        s, p = s + 1, ep
      end
    end
  end
  self.depth = self.depth + 1
  return s
end

function M:reset()
  self.level, self.depth = 0, MAXCCALLS
end

-- where a match can start at or after s: a pattern whose first item must match one
-- character of a class skips (natively, a linear scan) to the next such character;
-- nil when there is none. Without such an item, s.
function M:next_start(s)
  local skip = self.skip
  if skip == nil then
    skip = false
    local P, p = self.P, 1
    while s_byte(P, p) == 40 and s_byte(P, p + 1) ~= 41 do p = p + 1 end
    local c = s_byte(P, p)
    if c and p <= MAXCAPTURES and c ~= 41 and c ~= 40 and not (c == 36 and p + 1 == self.p_end)
       and not (c == 37 and s_find("bf0123456789", s_char(s_byte(P, p + 1) or 0), 1, true)) then
      local ok, ep = pcall(self.class_end, self, p)
      local q = ok and s_byte(P, ep)
      if ok and q ~= 42 and q ~= 63 and q ~= 45 and ep - p <= LONG_SET then
        local text = s_sub(P, p, ep - 1)
        skip = {text, c ~= 37 and c ~= 91 and c ~= 46}   -- a literal: a plain search
      end
    end
    self.skip = skip
  end
  if not skip then return s end
  if s >= self.src_end then return nil end
  return s_find(self.S, skip[1], s, skip[2])
end

function M:capture(i, s, e)
  if i > self.level then
    if i ~= 1 then error(s_format("invalid capture index %%%d", i), 0) end
    return s_sub(self.S, s, e - 1)
  end
  local l = self.len[i]
  if l == CAP_UNFINISHED then error("unfinished capture", 0) end
  if l == CAP_POSITION then return self.init[i] end
  return s_sub(self.S, self.init[i], self.init[i] + l - 1)
end

function M:captures(s, e, whole)
  local n = (self.level == 0 and whole) and 1 or self.level
  local out = {}
  for i = 1, n do out[i] = self:capture(i, s, e) end
  return unpack(out, 1, n)
end

local function start_at(init, ls)
  if init == nil or init > 0 then return init or 1 end
  if init == 0 or init < -ls then return 1 end
  return ls + init + 1
end

local function find_aux(S, P, init, find)
  local ls = #S
  init = start_at(init, ls)
  if init > ls + 1 then return nil end
  local anchor = s_byte(P, 1) == 94
  local ms = new(S, anchor and s_sub(P, 2) or P)
  local s1 = init
  repeat
    if not anchor then
      s1 = ms:next_start(s1)
      if s1 == nil then return nil end
    end
    ms:reset()
    local res = ms:match(s1, 1)
    if res then
      if find then return s1, res - 1, ms:captures(s1, res, false) end
      return ms:captures(s1, res, true)
    end
    s1 = s1 + 1
  until s1 > ms.src_end or anchor
  return nil
end

local lib = {}
function lib.find(S, P, init) return find_aux(S, P, init, true) end
function lib.match(S, P, init) return find_aux(S, P, init, false) end

function lib.gmatch(S, P, init)
  local ls = #S
  local src = start_at(init, ls)
  if src > ls + 1 then src = ls + 2 end  -- past the end: no match (as lstrlib)
  local ms, last = new(S, P), nil
  return function()
    while src <= ms.src_end do
      src = ms:next_start(src)
      if src == nil then src = ms.src_end + 1 break end
      ms:reset()
      local e = ms:match(src, 1)
      if e and e ~= last then
        local start = src
        src, last = e, e
        return ms:captures(start, e, true)
      end
      src = src + 1
    end
    return nil
  end
end

local function add_s(ms, out, s, e, news)
  local i, l = 1, #news
  while i <= l do
    local c = s_byte(news, i)
    if c ~= 37 then
      local j = s_find(news, "%", i, true) or l + 1
      out[#out + 1] = s_sub(news, i, j - 1)
      i = j
    else
      i = i + 1
      local d = s_byte(news, i)
      if d == 37 then out[#out + 1] = "%"
      elseif d == 48 then out[#out + 1] = s_sub(ms.S, s, e - 1)
      elseif d and d >= 49 and d <= 57 then out[#out + 1] = tostring(ms:capture(d - 48, s, e))
      else error("invalid use of '%' in replacement string", 0) end
      i = i + 1
    end
  end
end

function lib.gsub(S, P, repl, max_s)
  local tr = type(repl)
  if tr ~= "number" and tr ~= "string" and tr ~= "function" and tr ~= "table" then
    error("bad argument #3 to 'gsub' (string/function/table expected, got "
          .. (repl == nil and "no value" or tr) .. ")", 0)
  end
  if tr == "number" then repl = tostring(repl) tr = "string" end
  max_s = max_s or #S + 1
  local anchor = s_byte(P, 1) == 94
  local ms = new(S, anchor and s_sub(P, 2) or P)
  local out, src, last, n = {}, 1, nil, 0
  while n < max_s do
    if not anchor then
      local t = ms:next_start(src)
      if t == nil then break end
      if t > src then
        out[#out + 1] = s_sub(S, src, t - 1)
        src = t
      end
    end
    ms:reset()
    local e = ms:match(src, 1)
    if e and e ~= last then
      n = n + 1
      if tr == "string" then
        add_s(ms, out, src, e, repl)
      else
        local v
        if tr == "function" then v = repl(ms:captures(src, e, true))
        else v = repl[ms:capture(1, src, e)] end
        if not v then
          out[#out + 1] = s_sub(S, src, e - 1)
        elseif type(v) == "string" or type(v) == "number" then
          out[#out + 1] = tostring(v)
        else
          error("invalid replacement value (a " .. type(v) .. ")", 0)
        end
      end
      src, last = e, e
    elseif src < ms.src_end then
      out[#out + 1] = s_sub(S, src, src)
      src = src + 1
    else
      break
    end
    if anchor then break end
  end
  out[#out + 1] = s_sub(S, src)
  return concat(out), n
end

return lib
"""
