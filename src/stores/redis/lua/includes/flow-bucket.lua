-- A topic's bucket hash (KEYS[1]) as flow-admit.lua and flow-bind.lua read it: tokens and at
-- (nil for a missing bucket, which is full), and the admissions not yet bound, each a field
-- 'h<holder>' = "<tokens>,<until>" (ADR 0052). Returns tokens, at, and the holders as a list
-- of { field, tokens, until }.
local function readBucket()
  local fields = redis.call('HGETALL', KEYS[1])
  local tokens, at, holders = nil, nil, {}
  for i = 1, #fields, 2 do
    local f, v = fields[i], fields[i + 1]
    if f == 'tokens' then tokens = tonumber(v)
    elseif f == 'at' then at = tonumber(v)
    elseif string.sub(f, 1, 1) == 'h' then
      local t, u = string.match(v, '^([^,]*),(.*)$')
      holders[#holders + 1] = { f, tonumber(t), tonumber(u) }
    end
  end
  return tokens, at, holders
end
